//! Compiles every `.proto` under `proto/` (the service package `tabula.v1` in `proto/tabula/v1/`
//! and one package per game, `tabula.<game>.v1` in `proto/tabula/<game>/v1/`) with a vendored
//! `protoc`, so building needs no system protoc. The file descriptor set is kept for gRPC server
//! reflection and for canonical JSON (prost-reflect).

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC from the environment.
    unsafe { std::env::set_var("PROTOC", protoc) };

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let mut protos = Vec::new();
    collect_protos(Path::new("proto"), &mut protos)?;
    // A stable order keeps the descriptor set (and so reflection answers) reproducible.
    protos.sort();
    println!("cargo:rerun-if-changed=proto");

    tonic_prost_build::configure()
        .file_descriptor_set_path(out_dir.join("tabula_descriptor.bin"))
        // prost's encoding with each answer's view sized once (see `src/proto/codec.rs`).
        .codec_path("crate::proto::codec::TabulaCodec")
        // The vendored protoc's own include directory holds the well-known types
        // (`google/protobuf/timestamp.proto`, imported by the operator's API).
        .compile_protos(
            &protos,
            &[PathBuf::from("proto"), protoc_bin_vendored::include_path()?],
        )?;
    Ok(())
}

/// Every `.proto` file below `dir`.
fn collect_protos(dir: &Path, protos: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_protos(&path, protos)?;
        } else if path.extension().is_some_and(|ext| ext == "proto") {
            protos.push(path);
        }
    }
    Ok(())
}
