//! Escaping text for HTML and XML: the one escaper of the workspace (the evidence report here, the
//! service's status page and the canary's JUnit XML use it).
//!
//! It lives in the lowest crate that writes markup, which the operations crate and the CLI already
//! depend on, rather than in a crate of its own for twenty lines.

/// `text` made safe for HTML text and attribute values (quoted with either quote) and for XML 1.0
/// content and attributes: `&`, `<`, `>`, `"` and `'` become references (`&#39;` for the apostrophe,
/// which HTML 4 lacks a named entity for), and the characters XML 1.0 cannot carry at all (control
/// characters other than tab, line feed and carriage return; U+FFFE and U+FFFF) are dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if u32::from(c) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn every_special_character_becomes_a_reference() {
        for (raw, escaped) in [("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\"", "&quot;"), ("'", "&#39;")]
        {
            assert_eq!(escape(raw), escaped, "{raw:?}");
            assert_eq!(escape(&format!("a{raw}b")), format!("a{escaped}b"), "{raw:?} inside text");
        }
        assert_eq!(
            escape("<a title='x' href=\"y\">&</a>"),
            "&lt;a title=&#39;x&#39; href=&quot;y&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_reference_in_the_input_is_escaped_again() {
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn characters_xml_cannot_carry_are_dropped_and_whitespace_kept() {
        assert_eq!(escape("a\u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}b"), "ab");
        assert_eq!(escape("a\u{fffe}\u{ffff}b"), "ab");
        assert_eq!(escape("a\tb\nc\rd"), "a\tb\nc\rd");
        assert_eq!(escape("é ✓ \u{7f}"), "é ✓ \u{7f}");
    }
}
