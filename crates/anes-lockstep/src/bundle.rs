//! Writing [`Evidence`] as its bundle directory (the files listed in [`crate::evidence`]), with the
//! HTML page rendered from the same [`crate::Report`] as `report.json`.

use std::path::{Path, PathBuf};

use crate::evidence::{BUILD, BundleError, Evidence, diff_image, encode_png};
use crate::html;

impl Evidence {
    /// Writes the bundle into `dir` (created if needed) and returns the path of `report.html`.
    pub fn write_bundle(&self, dir: &Path) -> Result<PathBuf, BundleError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| BundleError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        // Each file atomically (an interrupted write leaves the old file or none, never half a report).
        let write = |name: &str, bytes: &[u8]| {
            anes_fs::write_output(&dir.join(name), bytes).map_err(BundleError::from)
        };
        let report = self.report();
        let json = serde_json::to_string_pretty(&report).expect("reports serialize");
        write("report.json", json.as_bytes())?;
        write("build.json", serde_json::to_string_pretty(&BUILD).expect("serializes").as_bytes())?;
        for (name, bytes) in [
            ("checkpoint_a.snap", &self.checkpoint_a),
            ("checkpoint_b.snap", &self.checkpoint_b),
            ("divergence_a.snap", &self.divergence_a),
            ("divergence_b.snap", &self.divergence_b),
        ] {
            if !bytes.is_empty() {
                write(name, bytes)?;
            }
        }
        write("inputs.input", &self.inputs_file)?;
        let mut images = Vec::new();
        if let Some((width, height)) = self.picture_size {
            let diff = diff_image(&self.picture_a, &self.picture_b);
            // Checked: the size may come from a peer's picture, and a wrapped product could match.
            let rgb_len = (width as usize).checked_mul(height as usize).and_then(|n| n.checked_mul(3));
            for (name, rgb) in [("a.png", &self.picture_a), ("b.png", &self.picture_b), ("diff.png", &diff)] {
                if Some(rgb.len()) == rgb_len {
                    let png = encode_png(width, height, rgb)
                        .map_err(|source| BundleError::Png { path: dir.join(name), source })?;
                    write(name, &png)?;
                    images.push((name, png));
                }
            }
        }
        let html = html::render(self, &report, &images);
        write("report.html", html.as_bytes())?;
        Ok(dir.join("report.html"))
    }
}
