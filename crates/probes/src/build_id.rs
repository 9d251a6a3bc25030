//! The GNU build id of an executable: the hash the linker writes into an ELF note, the
//! same for two files only when they are the same build. Seed 002 compares releases it
//! compiled itself and names each build; a run that records its server binary's build id
//! says which build it measured, so two runs of "15.18" from different packages are not
//! taken for one.

use std::path::Path;

/// The build id of the ELF file at `path` as lowercase hex; `None` when the file cannot
/// be read, is not ELF, or carries no build-id note (linked with `--build-id=none`).
pub fn gnu_build_id(path: &Path) -> Option<String> {
    use object::Object;
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let id = file.build_id().ok()??;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_one_and_a_text_file_has_none() {
        // Rust's linker invocation asks for a build id on Linux.
        let me = std::env::current_exe().unwrap();
        let id = gnu_build_id(&me).expect("the test binary has a build-id note");
        assert!(
            id.len() >= 16 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(gnu_build_id(&me), Some(id), "the same file, the same id");
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("not-elf");
        std::fs::write(&text, "#!/bin/sh\n").unwrap();
        assert_eq!(gnu_build_id(&text), None);
        assert_eq!(gnu_build_id(&dir.path().join("missing")), None);
    }
}
