//! What the ROM's codes mean, read at run time from its `README.md` (never copied): the "Error
//! Codes" part has a `## Page N: title` heading per menu page and a `### Test name` heading per
//! test, followed by lines `  C: meaning` (C = 0-9, then A, B, ... for 10, 11, ...); the "Success
//! Codes" part lists the codes of tests where several behaviours pass.

use std::path::Path;

use crate::limits::MAX_MANIFEST_LEN;

/// Which part of the README a section is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Errors,
    Successes,
    /// Removed tests and anything else.
    Other,
}

/// The codes one `###` heading explains.
#[derive(Debug, Clone)]
struct Section {
    part: Part,
    /// The menu pages of the `##` heading above it (error codes only).
    pages: Vec<u8>,
    heading: String,
    codes: Vec<(u8, String)>,
}

/// The README's code explanations.
#[derive(Debug, Clone, Default)]
pub(super) struct Docs {
    sections: Vec<Section>,
}

impl Docs {
    /// Reads `path`; a missing or unreadable README gives no explanations (the results stand on
    /// their own), and the reason.
    pub(super) fn load(path: &Path) -> (Docs, Option<String>) {
        match anes_fs::read_text_capped(path, MAX_MANIFEST_LEN as u64, "README") {
            Ok(text) => (Docs::parse(&text), None),
            Err(err) => (Docs::default(), Some(err.to_string())),
        }
    }

    pub(super) fn parse(text: &str) -> Docs {
        let mut part = Part::Other;
        let mut pages = Vec::new();
        let mut sections: Vec<Section> = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some(title) = trimmed.strip_prefix("### ") {
                sections.push(Section {
                    part,
                    pages: pages.clone(),
                    heading: title.trim().to_owned(),
                    codes: vec![],
                });
            } else if let Some(title) = trimmed.strip_prefix("## ") {
                // "Page 12: CPU Interrupts" or "Pages 3, 4, 5, and 11: Unofficial Instructions".
                let numbers = title.split(':').next().unwrap_or_default();
                pages = numbers
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|number| number.parse().ok())
                    .collect();
            } else if let Some(title) = trimmed.strip_prefix("# ") {
                part = match title.trim().to_ascii_lowercase().as_str() {
                    "error codes" => Part::Errors,
                    "success codes" => Part::Successes,
                    _ => Part::Other,
                };
                pages.clear();
            } else if let (Some(section), Some((code, meaning))) = (sections.last_mut(), code_line(trimmed)) {
                section.codes.push((code, meaning.to_owned()));
            }
        }
        Docs { sections }
    }

    /// What error code `code` of the test `name` on `page` means ("" when the README does not say).
    pub(super) fn error(&self, page: u8, name: &str, code: u8) -> String {
        let on_page: Vec<&Section> =
            self.sections.iter().filter(|s| s.part == Part::Errors && s.pages.contains(&page)).collect();
        // Pages 3-11 (the unofficial instructions) share one section.
        let section = if on_page.len() == 1 { Some(on_page[0]) } else { best_match(&on_page, name) };
        section.map(|section| meaning(section, code)).unwrap_or_default()
    }

    /// What success code `code` of the test `name` means ("" when the README does not say).
    pub(super) fn success(&self, name: &str, code: u8) -> String {
        let sections: Vec<&Section> = self.sections.iter().filter(|s| s.part == Part::Successes).collect();
        best_match(&sections, name).map(|section| meaning(section, code)).unwrap_or_default()
    }

    /// True when some section explains the errors of the test `name` on `page`.
    #[cfg(test)]
    pub(super) fn knows(&self, page: u8, name: &str) -> bool {
        let on_page: Vec<&Section> =
            self.sections.iter().filter(|s| s.part == Part::Errors && s.pages.contains(&page)).collect();
        on_page.len() == 1 || best_match(&on_page, name).is_some()
    }
}

/// Every explanation of `code` in `section` (a few codes have two, e.g. per console model).
fn meaning(section: &Section, code: u8) -> String {
    let lines: Vec<&str> =
        section.codes.iter().filter(|(c, _)| *c == code).map(|(_, meaning)| meaning.as_str()).collect();
    lines.join(" / ")
}

/// `C: meaning` with C one of 0-9 or A-Z (10-35).
fn code_line(line: &str) -> Option<(u8, &str)> {
    let (code, meaning) = line.split_once(':')?;
    let code = match code.as_bytes() {
        [digit @ b'0'..=b'9'] => digit - b'0',
        [letter @ b'A'..=b'Z'] => letter - b'A' + 10,
        _ => return None,
    };
    Some((code, meaning.trim()))
}

/// The section whose heading names the test: a heading "Topic: A, B, C" names every test with a
/// word A, B or C (the unofficial instructions' mnemonics); any other must hold the name's words
/// in order (a word may be abbreviated, "Regs" for "Registers"), and the heading with the fewest
/// other words wins ("Indirect" is "Indirect Addressing Wraparound", not "Indirect Addressing, X
/// Wraparound").
fn best_match<'a>(sections: &[&'a Section], name: &str) -> Option<&'a Section> {
    let name_words = words(name);
    sections
        .iter()
        .filter_map(|section| {
            let extra =
                if let Some((_, list)) = section.heading.split_once(':').filter(|(_, l)| l.contains(',')) {
                    let items = words(list);
                    name_words.iter().any(|word| items.contains(word)).then_some(0)
                } else {
                    let heading = words(&section.heading);
                    in_order(&name_words, &heading).then(|| heading.len() - name_words.len())
                };
            extra.map(|extra| (extra, *section))
        })
        .min_by_key(|(extra, _)| *extra)
        .map(|(_, section)| section)
}

/// Lowercase words, split at spaces, commas and colons.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// True when every word of `name` matches a word of `heading`, in order.
fn in_order(name: &[String], heading: &[String]) -> bool {
    let mut heading = heading.iter();
    name.iter().all(|word| heading.any(|candidate| abbreviates(word, candidate)))
}

/// `word` is `full` or an abbreviation of it: same first letter, at least 3 letters, all of them
/// in `full` in order.
fn abbreviates(word: &str, full: &str) -> bool {
    if word == full {
        return true;
    }
    if word.len() < 3 || word.as_bytes().first() != full.as_bytes().first() {
        return false;
    }
    let mut rest = full.chars();
    word.chars().all(|c| rest.any(|f| f == c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# Title\nintro: not a code\n# Error Codes\n\
        ## Page 2: Addressing Mode Wraparound\n\
        ### Indirect Addressing Wraparound\n  1: JMP wrong.  \n  2: No page wrap.\n\
        ### Indirect Addressing, X Wraparound\n  1: Wrong X.\n\
        ## Pages 3, 4, and 11: Unofficial Instructions\n\
        ### Unofficial Instructions: SLO, SHA, SHS\n  F: High byte.\n  0: Operand bytes.\n  B: Flags.\n\
        ## Page 19: PPU Misc.\n### Stale Sprite Shift Registers\n  3: Not clocked.\n\
        ### Sprites On Scanline 0\n  3: (RGB) one.\n  3: (Composite) two.\n\
        # Success Codes\n### Unofficial Instructions: SHA, SHS\n  1: AND with X and A.\n\
        # Removed Tests\n### Unofficial Instructions\n  1: old.\n";

    #[test]
    fn codes_are_found_by_page_and_name() {
        let docs = Docs::parse(README);
        assert_eq!(docs.error(2, "Indirect", 2), "No page wrap.");
        assert_eq!(docs.error(2, "Indirect, X", 1), "Wrong X.");
        assert_eq!(docs.error(4, "$93   SHA indirect,Y", 15), "High byte.");
        assert_eq!(docs.error(11, "$0B   ANC Immediate", 0), "Operand bytes.");
        assert_eq!(docs.error(19, "Stale Sprite Shift Regs", 3), "Not clocked.");
        assert_eq!(docs.error(19, "Sprites On Scanline 0", 3), "(RGB) one. / (Composite) two.");
        assert_eq!(docs.success("$9B   SHS absolute,Y", 1), "AND with X and A.");
    }

    #[test]
    fn what_the_readme_does_not_say_is_empty() {
        let docs = Docs::parse(README);
        assert_eq!(docs.error(2, "Indirect", 9), "");
        assert_eq!(docs.error(19, "Hybrid Addresses", 1), "");
        assert_eq!(docs.error(12, "Indirect", 1), "", "wrong page");
        assert_eq!(docs.success("Interrupt flag latency", 1), "");
        assert!(!docs.knows(19, "Hybrid Addresses"));
        assert!(Docs::parse("").sections.is_empty());
    }
}
