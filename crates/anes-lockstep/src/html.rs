//! `report.html`: the evidence side by side, static and self-contained (pictures inlined as data
//! URIs, no scripts), so it can be attached to a ticket or opened from an archive.

use core::fmt::Write;

use crate::evidence::{Evidence, Report, describe_write};

/// HTML-escapes text.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// Standard base64 (RFC 4648) with padding, for data URIs.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
code,td.mono{font-family:ui-monospace,monospace}\
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\
th{background:#f3f3f3}.a{color:#06c}.b{color:#c40}.pics{display:flex;gap:1.5em;flex-wrap:wrap}\
.pics img{width:320px;image-rendering:pixelated;border:1px solid #999}h1{font-size:1.4em}\
.summary{background:#fff4e5;border-left:4px solid #e80;padding:.6em 1em}";

/// Renders the page. `images` are the encoded PNGs (`a.png`, `b.png`, `diff.png`) to inline.
pub(crate) fn render(evidence: &Evidence, report: &Report, images: &[(&str, Vec<u8>)]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>anes lockstep divergence</title>\
         <style>{STYLE}</style></head><body><h1>Lockstep divergence ({})</h1><p class=\"summary\">{}</p>",
        report.kind.name(),
        esc(&report.message)
    );
    h.push_str("<h2>First divergent instruction</h2><table>");
    let row = |h: &mut String, k: &str, v: String| {
        let _ = write!(h, "<tr><th>{}</th><td class=\"mono\">{}</td></tr>", esc(k), esc(&v));
    };
    match (&report.pc, &report.instruction) {
        (Some(pc), Some(instruction)) => {
            row(&mut h, "instruction", format!("${pc:04X}: {instruction}"));
            row(&mut h, "opcode", format!("${:02X}", report.opcode.unwrap_or(0)));
        }
        _ => match &report.frame_localization {
            Some(l) if l.at_pairing => {
                row(&mut h, "instruction", "none: the machines already differed when paired".to_string());
            }
            Some(l) => row(
                &mut h,
                "instruction",
                format!(
                    "not localized (the machines do not step instructions): first divergent frame {}, {} frames replayed",
                    l.frame, l.frames_replayed
                ),
            ),
            None => row(
                &mut h,
                "instruction",
                format!(
                    "not localized: {}",
                    report.localization_error.as_deref().unwrap_or("localization off")
                ),
            ),
        },
    }
    row(&mut h, "frame", report.frame.to_string());
    row(&mut h, "CPU cycle", report.cpu_cycle.to_string());
    row(&mut h, "scanline, dot", format!("{}, {}", report.scanline, report.dot));
    if let Some(frame) = report.checkpoint_frame {
        row(&mut h, "replayed from checkpoint", format!("frame {frame}"));
    }
    if let Some(n) = report.instructions_replayed {
        row(&mut h, "instructions replayed", n.to_string());
    }
    h.push_str("</table>");

    h.push_str("<h2>Differing fields</h2>");
    if report.fields.is_empty() {
        h.push_str("<p>No field list (the divergence was not localized).</p>");
    }
    let mut section = "";
    for field in &report.fields {
        if field.section != section {
            if !section.is_empty() {
                h.push_str("</table>");
            }
            section = field.section;
            let _ = write!(
                h,
                "<h3>{}</h3><table><tr><th>field</th><th class=\"a\">A</th><th class=\"b\">B</th>\
                 <th class=\"a\">last write in A</th><th class=\"b\">last write in B</th></tr>",
                esc(section)
            );
        }
        let _ = write!(
            h,
            "<tr><td class=\"mono\">{}</td><td class=\"mono a\">{}</td><td class=\"mono b\">{}</td>\
             <td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>",
            esc(&field.name),
            esc(&field.a),
            esc(&field.b),
            esc(&describe_write(field.last_write_a.as_ref())),
            esc(&describe_write(field.last_write_b.as_ref()))
        );
    }
    if !section.is_empty() {
        h.push_str("</table>");
    }
    if report.fields_omitted > 0 {
        let _ = write!(h, "<p>{} more differing fields not listed.</p>", report.fields_omitted);
    }

    if !images.is_empty() {
        h.push_str("<h2>Pictures at the end of the divergent frame</h2><div class=\"pics\">");
        for (name, png) in images {
            let caption = match *name {
                "a.png" => "machine A",
                "b.png" => "machine B",
                _ => "differing pixels (red)",
            };
            let _ = write!(
                h,
                "<figure><img alt=\"{caption}\" src=\"data:image/png;base64,{}\"><figcaption>{caption} \
                 (<a href=\"{name}\">{name}</a>)</figcaption></figure>",
                base64(png)
            );
        }
        h.push_str("</div>");
    }

    h.push_str("<h2>Where the comparator saw it</h2><table><tr><th></th><th class=\"a\">A</th><th class=\"b\">B</th></tr>");
    let d = &report.detected;
    for (k, a, b) in [
        ("frames completed", d.a.frame.to_string(), d.b.frame.to_string()),
        ("CPU cycle", d.a.cpu_cycle.to_string(), d.b.cpu_cycle.to_string()),
        ("scanline, dot", format!("{}, {}", d.a.scanline, d.a.dot), format!("{}, {}", d.b.scanline, d.b.dot)),
        ("state hash", d.a.state_hash.clone(), d.b.state_hash.clone()),
    ] {
        let _ = write!(
            h,
            "<tr><th>{k}</th><td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>",
            esc(&a),
            esc(&b)
        );
    }
    let _ = write!(
        h,
        "</table><p>Sync point {} ({} granularity), input frame {}{}.",
        d.sync_point,
        d.granularity,
        d.frame,
        if d.at_frame_end { ", at its end" } else { "" }
    );
    if let Some(sections) = &d.sections {
        let _ = write!(h, " Sections differing there: {}.", esc(&sections.join(", ")));
    }
    h.push_str("</p>");

    if !report.faults.is_empty() {
        h.push_str("<h2>Injected faults (machine B)</h2><table><tr><th>fault</th><th>frame</th><th>applied at cycle</th><th>refused</th></tr>");
        for f in &report.faults {
            let _ = write!(
                h,
                "<tr><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.spec),
                f.frame,
                f.cpu_cycle,
                esc(f.refused.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>");
    }

    h.push_str("<h2>Files</h2><ul>");
    let mut files = vec![("report.json", "this report as JSON"), ("build.json", "build identity")];
    if !evidence.checkpoint_a.is_empty() {
        files.push(("checkpoint_a.snap", "A's snapshot at the last verified checkpoint"));
        files.push(("checkpoint_b.snap", "B's snapshot at the last verified checkpoint"));
    }
    files.push(("divergence_a.snap", "A's snapshot after the divergent instruction"));
    files.push(("divergence_b.snap", "B's snapshot after the divergent instruction"));
    files.push(("inputs.input", "inputs from frame 0 through the divergent frame, indexed by frame number"));
    for (name, what) in files {
        let _ = write!(h, "<li><a href=\"{name}\"><code>{name}</code></a>: {what}</li>");
    }
    h.push_str("</ul>");
    if let Some(frame) = report.checkpoint_frame {
        let _ = write!(
            h,
            "<p>Replay machine A from the checkpoint to the end of the divergent frame:</p>\
             <pre>anes run ROM --load-state checkpoint_a.snap --input inputs.input --frames {}</pre>",
            report.detected.frame + 1 - frame
        );
    }
    let _ = writeln!(
        h,
        "<p>anes-lockstep {} (commit {}).</p></body></html>",
        report.build.crate_version,
        report.build.git_commit.unwrap_or("unknown")
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("<a href=\"x\">&</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
    }
}
