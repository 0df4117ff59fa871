//! The ROM's test list, `accuracycoin_tests.csv` beside it: which tests exist, in which order they
//! run, on which page, and where each stores its result byte. Read at run time, never copied.

use std::path::Path;

use crate::limits::MAX_MANIFEST_LEN;

/// One scored test of the ROM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestEntry {
    /// 1-based, in the order the ROM runs them.
    pub index: u16,
    /// The menu page.
    pub page: u8,
    /// The name the ROM shows.
    pub name: String,
    /// Where the ROM stores the test's result byte.
    pub result_addr: u16,
}

/// Reads the scored tests ("kind" `test`; the `draw` entries only print information) from `path`.
pub(super) fn load(path: &Path) -> Result<Vec<TestEntry>, String> {
    let text = anes_fs::read_text_capped(path, MAX_MANIFEST_LEN as u64, "test list")
        .map_err(|err| err.to_string())?;
    parse(&text).map_err(|err| format!("{}: {err}", path.display()))
}

/// Parses the CSV text: a header naming at least `index`, `page`, `name`, `result_addr` and `kind`,
/// then one row per test.
pub(super) fn parse(text: &str) -> Result<Vec<TestEntry>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty());
    let (_, header) = lines.next().ok_or("the test list is empty")?;
    let header = fields(header).map_err(|err| format!("line 1: {err}"))?;
    let column = |name: &str| {
        header.iter().position(|field| field == name).ok_or(format!("line 1: no column {name:?}"))
    };
    let (index, page, name, addr, kind) =
        (column("index")?, column("page")?, column("name")?, column("result_addr")?, column("kind")?);
    let mut tests = Vec::new();
    for (number, line) in lines {
        let row = fields(line).map_err(|err| format!("line {}: {err}", number + 1))?;
        let field = |at: usize| {
            row.get(at).map(String::as_str).ok_or(format!("line {}: only {} fields", number + 1, row.len()))
        };
        if field(kind)? != "test" {
            continue;
        }
        let bad = |what: &str, value: &str| format!("line {}: {what} {value:?} is not a number", number + 1);
        let result_addr = field(addr)?;
        tests.push(TestEntry {
            index: field(index)?.parse().map_err(|_| bad("index", field(index).unwrap_or_default()))?,
            page: field(page)?.parse().map_err(|_| bad("page", field(page).unwrap_or_default()))?,
            name: field(name)?.to_owned(),
            result_addr: result_addr
                .strip_prefix("0x")
                .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                .ok_or_else(|| bad("result_addr", result_addr))?,
        });
    }
    if tests.is_empty() {
        return Err("the test list names no test".to_owned());
    }
    Ok(tests)
}

/// The fields of one CSV line: comma-separated, optionally double-quoted with `""` for a quote.
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quoted field is not closed".to_owned()),
                }
            }
            if !matches!(chars.peek(), None | Some(',')) {
                return Err("text after a quoted field".to_owned());
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                field.push(c);
                chars.next();
            }
        }
        fields.push(field);
        match chars.next() {
            Some(',') => continue,
            _ => return Ok(fields),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = "index,page,page_title,slot,name,result_symbol,result_addr,kind,entry_label\n\
        1,1,\"CPU Behavior\",0,\"ROM is not writable\",result_ROMnotWritable,0x0405,test,TEST_A\n\
        2,3,\"Unofficial, \"\"quoted\"\"\",0,\"$03   SLO indirect,X\",result_B,0x0409,test,TEST_B\n\
        ,15,\"Power On State\",0,\"CPU RAM\",result_DrawTest,0x03FF,draw,TEST_C\n";

    #[test]
    fn scored_tests_are_read_with_quoted_commas_and_draw_entries_skipped() {
        let tests = parse(LIST).unwrap();
        assert_eq!(
            tests,
            [
                TestEntry { index: 1, page: 1, name: "ROM is not writable".into(), result_addr: 0x0405 },
                TestEntry { index: 2, page: 3, name: "$03   SLO indirect,X".into(), result_addr: 0x0409 },
            ]
        );
        assert_eq!(fields("a,\"b \"\"c\"\"\",").unwrap(), ["a", "b \"c\"", ""]);
    }

    #[test]
    fn malformed_lists_are_refused_with_the_line() {
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("index,page,name,kind\n").unwrap_err().contains("result_addr"));
        let bad_addr = LIST.replace("0x0405", "1029");
        assert!(parse(&bad_addr).unwrap_err().starts_with("line 2: result_addr \"1029\""));
        let open_quote = LIST.replace("\"ROM is not writable\"", "\"ROM is");
        assert!(parse(&open_quote).unwrap_err().contains("not closed"));
        let short = "index,page,name,result_addr,kind\n1,1,x\n";
        assert!(parse(short).unwrap_err().contains("only 3 fields"));
    }
}
