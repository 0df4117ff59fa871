//! No module circles: within each crate of `crates/`, the modules (one per source file) that name each
//! other through `use` and `crate::`/`super::`/`self::` paths must form no cycle: none is allowed.
//! Where a console-wide type is stepped by the file that defines a chip's behaviour (the bus, the
//! spin watch, the state sections), the type lives in a leaf module of that folder (`bus/sync.rs`,
//! `spin/watch.rs`, `state/machine.rs`, ...) and `nes.rs` names only the leaves.
//!
//! The graph is read from the sources, not the compiler's name resolution: a file depends on the
//! deepest module file a path names (`crate::state::state_struct!` depends on `state/mod.rs`, which
//! is the point: a facade that gathers its children is a dependency of whoever names through it). A
//! `pub use` is a re-export, not a dependency of the module's own code, so it adds no edge; `mod`
//! declarations add none either. `#[cfg(test)]` items and test-only module files are left out: a test
//! may look at anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each circle is reported as the module paths of its files (a file's path below `src/` without
/// `.rs`, `mod.rs` as its folder, `lib.rs` as `lib`).
#[test]
fn no_module_circles() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut found: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    for entry in std::fs::read_dir(&crates).expect("crates/ lists") {
        let dir = entry.expect("crates/ entry").path();
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for circle in circles(&src) {
            found.insert((name.clone(), circle));
        }
    }
    assert!(found.is_empty(), "module circles (crate, files): {found:#?}");
}

#[test]
fn the_reader_sees_the_circles_it_must() {
    let dir = tempdir("anes-module-cycles");
    let src = dir.join("src");
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub use a::A;\n");
    // a -> b through a grouped use, b -> a through an inline path: a circle.
    write("a.rs", "use crate::{b::{self, B}, c};\npub struct A;\n");
    write("b.rs", "pub struct B;\nfn f() -> crate::a::A { crate::a::A }\n");
    // c -> d through super::, d -> c only in a test, a string and a comment: no circle.
    write("c.rs", "use super::d::D;\n");
    write(
        "d.rs",
        "pub struct D;\n// crate::c\nconst S: &str = \"crate::c::X\";\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n",
    );
    assert_eq!(circles(&src), vec![vec!["a".to_string(), "b".to_string()]]);
    // A macro path through a facade counts, a `pub use` does not.
    write("c.rs", "pub use crate::d::D;\n");
    write("d.rs", "crate::c::m! {}\n");
    assert_eq!(circles(&src), vec![vec!["a".to_string(), "b".to_string()]]);
    write("c.rs", "use crate::d::D;\n");
    assert_eq!(circles(&src).len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

type Module = Vec<String>;

/// The strongly connected components of more than one file in the crate at `src`, each as sorted
/// module paths joined by `/`, sorted.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut files: BTreeMap<Module, PathBuf> = BTreeMap::new();
    collect_files(src, src, &mut files);
    let mut test_only: BTreeSet<Module> = BTreeSet::new();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("source reads");
        let (code, test_modules) = without_tests(&blank_literals_and_comments(&text));
        for child in test_modules {
            let mut child_module = module.clone();
            child_module.push(child);
            test_only.insert(child_module);
        }
        let targets = edges.entry(module.clone()).or_default();
        for path in paths(&code) {
            match resolve(&files, module, &path) {
                Some(target) if &target != module => {
                    targets.insert(target);
                }
                _ => {}
            }
        }
    }
    let is_test = |m: &Module| test_only.iter().any(|t| m.starts_with(t));
    edges.retain(|m, _| !is_test(m));
    for targets in edges.values_mut() {
        targets.retain(|m| !is_test(m));
    }
    let mut out: Vec<Vec<String>> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut names: Vec<String> =
                c.iter().map(|m| if m.is_empty() { "lib".to_string() } else { m.join("/") }).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

fn collect_files(src: &Path, dir: &Path, files: &mut BTreeMap<Module, PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source folder lists") {
        let path = entry.expect("source entry").path();
        if path.is_dir() {
            collect_files(src, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module =
                relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                module.pop();
            }
            files.insert(module, path);
        }
    }
}

/// `text` with comments, string and character literals replaced by spaces (byte offsets kept), so
/// braces and paths inside them are not seen.
fn blank_literals_and_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !ident_before && raw_string_start(&b[i..]).is_some() {
            let (prefix, hashes) = raw_string_start(&b[i..]).unwrap();
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + prefix;
            let end = b[body..]
                .windows(closing.len())
                .position(|w| w == closing.as_slice())
                .map_or(b.len(), |p| body + p + closing.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}', or one multi-byte char); a lifetime is left.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p + 1)
            } else {
                let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// `r"`, `r#"`, `br##"` ...: the prefix length and the number of `#`.
fn raw_string_start(b: &[u8]) -> Option<(usize, usize)> {
    let after_b = usize::from(b.first() == Some(&b'b'));
    if b.get(after_b) != Some(&b'r') {
        return None;
    }
    let hashes = b[after_b + 1..].iter().take_while(|&&c| c == b'#').count();
    (b.get(after_b + 1 + hashes) == Some(&b'"')).then_some((after_b + 2 + hashes, hashes))
}

/// `code` without the items under `#[cfg(test)]`, and the names of the module files declared there.
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut code = code.to_string();
    let mut test_modules = Vec::new();
    while let Some(at) = code.find("#[cfg(test)]") {
        let b = code.as_bytes();
        let mut end = at + "#[cfg(test)]".len();
        while end < b.len() && b[end] != b';' && b[end] != b'{' {
            end += 1;
        }
        let head = &code[at + "#[cfg(test)]".len()..end];
        if end < b.len() && b[end] == b';' {
            let words: Vec<&str> = head.split_whitespace().collect();
            if let [.., "mod", name] = words.as_slice() {
                test_modules.push(name.to_string());
            }
        } else {
            let mut depth = 0;
            while end < b.len() {
                match b[end] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
        }
        code.replace_range(at..(end + 1).min(code.len()), "");
    }
    (code, test_modules)
}

/// Every path that can name a module of the crate: the expanded trees of non-`pub` `use` items, and
/// the `crate::`, `$crate::`, `super::` and `self::` paths elsewhere.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest_of_code = String::new();
    let mut last = 0;
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(p) = code[i..].find("use ") {
        let at = i + p;
        let word_start = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let Some(semi) = code[at..].find(';').map(|s| at + s) else { break };
        if word_start {
            let before = code[..at].trim_end();
            // `pub use` and `pub(crate) use` re-export: no edge.
            let before_visibility = match before.strip_suffix(')') {
                Some(open) => open.rfind('(').map_or(before, |p| open[..p].trim_end()),
                None => before,
            };
            if !before_visibility.ends_with("pub") {
                expand_use_tree(&compact_use_tree(&code[at + 4..semi]), &mut Vec::new(), &mut out);
            }
            rest_of_code.push_str(&code[last..at]);
            last = semi + 1;
            i = semi + 1;
        } else {
            i = at + 4;
        }
    }
    rest_of_code.push_str(&code[last..]);
    let b = rest_of_code.as_bytes();
    for root in ["$crate", "crate", "super", "self"] {
        let mut from = 0;
        while let Some(p) = rest_of_code[from..].find(root) {
            let at = from + p;
            from = at + root.len();
            let before_ok = at == 0
                || !(b[at - 1].is_ascii_alphanumeric()
                    || b[at - 1] == b'_'
                    || b[at - 1] == b':'
                    || (root != "$crate" && b[at - 1] == b'$'));
            if !before_ok || !rest_of_code[from..].trim_start().starts_with("::") {
                continue;
            }
            let mut path = vec![root.to_string()];
            let mut j = from;
            loop {
                let tail = &rest_of_code[j..];
                let trimmed = tail.trim_start();
                if !trimmed.starts_with("::") {
                    break;
                }
                let after = trimmed[2..].trim_start();
                let ident: String =
                    after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if ident.is_empty() {
                    break;
                }
                j = rest_of_code.len() - after.len() + ident.len();
                path.push(ident);
            }
            out.push(path);
        }
    }
    out
}

/// A `use` tree with whitespace removed except the single spaces around `as`.
fn compact_use_tree(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut out = String::new();
    for (k, word) in words.iter().enumerate() {
        if k > 0 && (*word == "as" || words[k - 1] == "as") {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Expands a compacted `use` tree into full paths, appending them to `out`.
fn expand_use_tree(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut depth = 0;
    let mut start = 0;
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let base = prefix.len();
        prefix.extend(head.split("::").filter(|s| !s.is_empty()).map(str::to_string));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use_tree(&inner[start..k], prefix, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand_use_tree(&inner[start..], prefix, out);
        prefix.truncate(base);
    } else if !tree.is_empty() {
        let without_rename = tree.split(' ').next().unwrap_or(tree);
        let mut path = prefix.clone();
        path.extend(without_rename.split("::").filter(|s| !s.is_empty() && *s != "*").map(str::to_string));
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        out.push(path);
    }
}

/// The deepest module file `path`, written in `module`, names; `None` for other crates.
fn resolve(files: &BTreeMap<Module, PathBuf>, module: &Module, path: &[String]) -> Option<Module> {
    let (mut current, rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate" | "$crate") => (Vec::new(), &path[1..]),
        Some("self") => (module.clone(), &path[1..]),
        Some("super") => {
            let mut current = module.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                current.pop();
                rest = &rest[1..];
            }
            (current, rest)
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !files.contains_key(&child) {
                return None;
            }
            (module.clone(), path)
        }
        None => return None,
    };
    for segment in rest {
        let mut next = current.clone();
        next.push(segment.clone());
        if !files.contains_key(&next) {
            break;
        }
        current = next;
    }
    Some(current)
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'e> {
        edges: &'e BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'e Module, usize>,
        low: BTreeMap<&'e Module, usize>,
        stack: Vec<&'e Module>,
        on_stack: BTreeSet<&'e Module>,
        components: Vec<Vec<Module>>,
    }
    fn visit<'e>(s: &mut State<'e>, v: &'e Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.edges.get(v) {
            for w in targets {
                let Some((w, _)) = s.edges.get_key_value(w) else { continue };
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[w].min(s.low[v]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.index[w].min(s.low[v]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.components
}
