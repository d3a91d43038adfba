//! Compiles `proto/tabula/v1/*.proto` with a vendored `protoc`, so building needs no system protoc.
//! The file descriptor set is kept for gRPC server reflection and for canonical JSON (prost-reflect).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC from the environment.
    unsafe { std::env::set_var("PROTOC", protoc) };

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let mut protos: Vec<PathBuf> = std::fs::read_dir("proto/tabula/v1")?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "proto"))
        .collect();
    protos.sort();
    println!("cargo:rerun-if-changed=proto");

    tonic_prost_build::configure()
        .file_descriptor_set_path(out_dir.join("tabula_descriptor.bin"))
        .compile_protos(&protos, &[PathBuf::from("proto")])?;
    Ok(())
}
