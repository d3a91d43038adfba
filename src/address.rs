//! Server addresses as operators write them. The client commands name the Tabula server this way
//! and telemetry its OTLP collector; both sit above this module, which imports nothing.

/// An address as a URI: `host:port` (what operators type, and what `--listen` takes) gets
/// `http://` (plaintext, as servers and collectors inside a cluster usually are); an address
/// that already has a scheme is kept.
pub fn with_scheme(address: &str) -> String {
    let address = address.trim();
    if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_address_gets_http_and_a_scheme_is_kept() {
        assert_eq!(with_scheme("127.0.0.1:50051"), "http://127.0.0.1:50051");
        assert_eq!(with_scheme("localhost:50051"), "http://localhost:50051");
        assert_eq!(with_scheme(" tabula:50051 "), "http://tabula:50051");
        assert_eq!(with_scheme("https://tabula:443"), "https://tabula:443");
        assert_eq!(with_scheme("http://[::1]:50051"), "http://[::1]:50051");
    }
}
