//! Builds the log interface's C shim into the library, and the test core (`testcore/`) as two
//! shared objects, build A and build B (B differs from frame 200 on, for the canary's tests, and where Select is held), whose
//! paths the crate names as `ANES_TEST_CORE_A` and `ANES_TEST_CORE_B`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/log_shim.c");
    println!("cargo:rerun-if-changed=testcore/anes_test_core.c");
    cc::Build::new().file("src/log_shim.c").warnings(true).compile("anes_retro_log_shim");

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let compiler = cc::Build::new().get_compiler();
    for (name, defines) in [("a", &[][..]), ("b", &["-DANES_TEST_CORE_BUILD_B"][..])] {
        let path = out.join(format!("anes_test_core_{name}_libretro.so"));
        let status = compiler
            .to_command()
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-o"])
            .arg(&path)
            .args(defines)
            .arg("testcore/anes_test_core.c")
            .status();
        match status {
            Ok(s) if s.success() => {}
            other => panic!("building the test core {} failed: {other:?}", path.display()),
        }
        println!("cargo:rustc-env=ANES_TEST_CORE_{}={}", name.to_uppercase(), path.display());
    }
}
