//! Flags from the environment anes is given, read one way everywhere.

use std::ffi::OsStr;

/// True when the environment variable `name` is set to anything but empty, `0` or `false` (in any
/// case, surrounding whitespace ignored). A value that is not UTF-8 counts as set.
pub fn env_flag(name: &str) -> bool {
    flag_is_set(std::env::var_os(name).as_deref())
}

/// True under CI: `CI` read as an [`env_flag`] (CI services set `CI=true`; `CI=false` or `CI=0` is not
/// CI). Under CI a test whose tool, server or ROMs are missing fails instead of skipping, where a skip
/// would pass unseen. `.ci/run` applies the same rule in bash.
pub fn ci_is_set() -> bool {
    env_flag("CI")
}

fn flag_is_set(value: Option<&OsStr>) -> bool {
    let Some(value) = value else { return false };
    match value.to_str() {
        Some(text) => {
            let text = text.trim();
            !(text.is_empty() || text == "0" || text.eq_ignore_ascii_case("false"))
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::flag_is_set;

    #[test]
    fn unset_empty_zero_and_false_in_any_case_are_off() {
        for off in ["", "  ", "0", " 0 ", "false", "FALSE", "False", "fAlSe", "\tfalse\n"] {
            assert!(!flag_is_set(Some(OsStr::new(off))), "{off:?}");
        }
        assert!(!flag_is_set(None));
    }

    #[test]
    fn anything_else_is_on() {
        for on in ["true", "TRUE", "1", "yes", "no", "00", "off", "falsey", "github"] {
            assert!(flag_is_set(Some(OsStr::new(on))), "{on:?}");
        }
    }

    /// `.ci/run` sources `scripts/ci-is-set.sh`; its bash rule must answer as this one does.
    #[test]
    fn the_ci_scripts_rule_agrees() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/ci-is-set.sh");
        let values = ["", " ", "0", "false", "FALSE", " False ", "true", "1", "yes", "no", "00", "off"];
        for value in values {
            let status = std::process::Command::new("bash")
                .args(["-c", "source \"$1\" && ci_is_set", "bash", script])
                .env("CI", value)
                .status()
                .expect("bash runs");
            assert_eq!(status.success(), flag_is_set(Some(OsStr::new(value))), "CI={value:?}");
        }
        let status = std::process::Command::new("bash")
            .args(["-c", "source \"$1\" && ci_is_set", "bash", script])
            .env_remove("CI")
            .status()
            .expect("bash runs");
        assert!(!status.success(), "CI unset");
    }

    #[test]
    fn a_value_that_is_not_utf8_is_on() {
        use std::os::unix::ffi::OsStrExt;
        assert!(flag_is_set(Some(OsStr::from_bytes(b"\xff"))));
    }
}
