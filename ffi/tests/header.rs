//! The committed C header is what cbindgen generates from the crate: regenerated here
//! and compared byte for byte. `KESTREL_UPDATE_HEADER=1` rewrites it instead (after a
//! change to the ABI), and the diff goes into the same commit.

use std::path::Path;

#[test]
fn committed_header_is_generated_from_the_crate() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = crate_dir.join("include/kestrel.h");
    if std::env::var_os("KESTREL_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/kestrel.h");
    }
    let committed = std::fs::read(&path).expect("include/kestrel.h exists");
    assert!(
        committed == generated,
        "include/kestrel.h differs from what cbindgen generates: run \
         `KESTREL_UPDATE_HEADER=1 cargo test -p kestrel-ffi --test header` and commit the result"
    );
}

/// The C names the host's tools print for the enumerations' values are the header's own.
#[test]
fn enum_names_are_the_headers() {
    use kestrel_ffi::kernel::KernelKind;
    use kestrel_ffi::svm::SvmLoss;
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/kestrel.h")).unwrap();
    let names = (0..8).filter_map(|v| KernelKind::of(v).map(|kind| (kind.c_name(), kind as u32)));
    let names: Vec<(&str, u32)> =
        names.chain((0..8).filter_map(|v| SvmLoss::of(v).map(|l| (l.c_name(), l as u32)))).collect();
    assert_eq!(names.len(), 6);
    for (name, value) in names {
        assert!(header.contains(&format!("  {name} = {value},")), "{name} = {value} is not in kestrel.h");
    }
}
