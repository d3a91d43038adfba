//! Generated protobuf types and the file descriptor set (for reflection and canonical JSON).

#![allow(clippy::all, missing_docs)]

pub mod v1 {
    tonic::include_proto!("tabula.v1");

    pub mod la_strada {
        tonic::include_proto!("tabula.v1.la_strada");
    }

    pub mod manila {
        tonic::include_proto!("tabula.v1.manila");
    }

    pub mod medici_vs_strozzi {
        tonic::include_proto!("tabula.v1.medici_vs_strozzi");
    }

    pub mod strozzi {
        tonic::include_proto!("tabula.v1.strozzi");
    }
}

/// The encoded `FileDescriptorSet` of every Tabula proto.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("tabula_descriptor");
