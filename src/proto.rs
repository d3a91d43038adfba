//! Generated protobuf types and the file descriptor set (for reflection and canonical JSON).
//!
//! The modules mirror the proto packages: `tabula.v1` (the service and the generic messages) is
//! [`tabula::v1`], and each game's `tabula.<game>.v1` is `tabula::<game>::v1`; the generated code
//! refers across packages by relative paths, so this nesting is required. The re-exports below
//! give the short paths the rest of the crate uses (`proto::v1`, `proto::manila::v1`, …).
//! [`codec`] is how the generated services write and read these messages.

pub mod codec;

pub mod tabula {
    #![allow(clippy::all, missing_docs)]

    pub mod v1 {
        tonic::include_proto!("tabula.v1");
    }

    pub mod la_strada {
        pub mod v1 {
            tonic::include_proto!("tabula.la_strada.v1");
        }
    }

    pub mod manila {
        pub mod v1 {
            tonic::include_proto!("tabula.manila.v1");
        }
    }

    pub mod medici_vs_strozzi {
        pub mod v1 {
            tonic::include_proto!("tabula.medici_vs_strozzi.v1");
        }
    }

    pub mod nim {
        pub mod v1 {
            tonic::include_proto!("tabula.nim.v1");
        }
    }

    pub mod strozzi {
        pub mod v1 {
            tonic::include_proto!("tabula.strozzi.v1");
        }
    }
}

pub use tabula::{la_strada, manila, medici_vs_strozzi, nim, strozzi, v1};

/// The encoded `FileDescriptorSet` of every Tabula proto.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("tabula_descriptor");
