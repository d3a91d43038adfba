//! The `tabula` command: everything it does is in the library (`tabula::app`).

use std::process::ExitCode;

/// Every RPC allocates and frees many small buffers (HTTP/2 frames, protobuf messages, Redis
/// replies); profiles of a replica under load showed glibc's allocator among its largest costs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tabula::app::main()
}
