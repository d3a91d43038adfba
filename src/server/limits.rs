//! The limits an operator sets on what one caller can make a replica do or hold: request rates per
//! peer address and per seat token, concurrent Observe streams per connection and per replica,
//! request size and HTTP/2 streams per connection. Every limit is answered with
//! `RESOURCE_EXHAUSTED` and a short message, before the request reaches the service.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A request rate: `per_second` on average, up to `burst` at once. Zero `per_second` is no limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    /// Requests per second, on average.
    pub per_second: f64,
    /// Requests allowed at once.
    pub burst: u32,
}

impl Rate {
    /// No limit at all.
    pub const UNLIMITED: Rate = Rate {
        per_second: 0.0,
        burst: 0,
    };

    /// `per_second` on average with bursts of `burst`.
    pub const fn new(per_second: f64, burst: u32) -> Rate {
        Rate { per_second, burst }
    }

    /// True when the rate bounds nothing.
    pub fn is_unlimited(&self) -> bool {
        self.per_second <= 0.0
    }
}

/// Parses `RATE:BURST` (e.g. `50:200`), `RATE` (burst = rate, at least 1) or `0` (no limit).
impl FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (rate, burst) = match text.split_once(':') {
            Some((rate, burst)) => (rate, Some(burst)),
            None => (text, None),
        };
        let per_second: f64 = rate
            .trim()
            .parse()
            .ok()
            .filter(|r: &f64| r.is_finite() && *r >= 0.0)
            .ok_or_else(|| format!("{text:?}: expected RATE[:BURST], e.g. 50:200 (0: no limit)"))?;
        let burst = match burst {
            Some(burst) => burst
                .trim()
                .parse()
                .ok()
                .filter(|b: &u32| *b >= 1)
                .ok_or_else(|| format!("{text:?}: the burst must be a whole number ≥ 1"))?,
            None => (per_second.ceil() as u32).max(1),
        };
        Ok(Rate { per_second, burst })
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_unlimited() {
            write!(f, "0")
        } else {
            write!(f, "{}:{}", self.per_second, self.burst)
        }
    }
}

/// Everything an operator can bound at the edge of a replica.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeLimits {
    /// CreateGame per peer address (it carries no token).
    pub create_game_per_address: Rate,
    /// Act per peer address.
    pub act_per_address: Rate,
    /// Act per seat token.
    pub act_per_token: Rate,
    /// Observe calls per peer address.
    pub observe_per_address: Rate,
    /// Observe calls per seat token.
    pub observe_per_token: Rate,
    /// Observe streams open at once on one connection (0: no limit).
    pub observe_streams_per_connection: usize,
    /// Observe streams open at once on this replica (0: no limit).
    pub observe_streams_per_replica: usize,
    /// The largest request message accepted, in bytes (after decompression).
    pub max_request_bytes: usize,
    /// HTTP/2 streams (calls) a client may have open at once on one connection; advertised in the
    /// connection's SETTINGS, so conforming clients queue further calls instead of failing.
    pub http2_streams_per_connection: u32,
    /// The most request metadata (header fields, each counted as HTTP/2 does: name, value and 32
    /// bytes) one call may carry; a call over it fails on its own with RESOURCE_EXHAUSTED (see
    /// [`HEADER_BLOCK_HARD_LIMIT`] for what the connection itself accepts).
    pub max_header_bytes: usize,
}

/// The largest header block the HTTP/2 layer decodes (`SETTINGS_MAX_HEADER_LIST_SIZE`), far above
/// [`EdgeLimits::max_header_bytes`]. Beyond its own limit the HTTP/2 layer does not fail the call
/// with a status: a decoded block over it is answered with a bare HTTP 431 and a stream reset,
/// one over four times it (or a block that takes too many CONTINUATION frames) with a GOAWAY that
/// ends every call on the connection. With hyper's default of 16 KiB a 64 KiB bearer token took
/// down the caller's whole connection; with this limit a block up to 1 MiB reaches the edge, which
/// fails that call alone with a status naming the limit. Memory per connection stays bounded: one
/// header block is decoded at a time, and the edge drops a refused call's headers at once.
pub const HEADER_BLOCK_HARD_LIMIT: u32 = 1 << 20;

/// The largest `--max-header-bytes`: a quarter of [`HEADER_BLOCK_HARD_LIMIT`], so a call somewhat
/// over the limit still gets its status rather than a stream reset.
pub const MAX_HEADER_BYTES_CEILING: usize = HEADER_BLOCK_HARD_LIMIT as usize / 4;

impl Default for EdgeLimits {
    /// The defaults of `tabula serve`: generous for play (a board game makes a few moves a second),
    /// tight enough that one caller cannot fill the store or hold the replica's memory.
    fn default() -> Self {
        EdgeLimits {
            create_game_per_address: Rate::new(10.0, 50),
            act_per_address: Rate::new(1000.0, 2000),
            act_per_token: Rate::new(50.0, 200),
            observe_per_address: Rate::new(50.0, 200),
            observe_per_token: Rate::new(10.0, 50),
            observe_streams_per_connection: 64,
            observe_streams_per_replica: 10_000,
            max_request_bytes: 4 * 1024 * 1024,
            http2_streams_per_connection: 256,
            // What hyper accepted before (its HTTP/2 default), now answered per call: far above
            // any real token or trace context, well below what a replica should hold per call.
            max_header_bytes: 16 * 1024,
        }
    }
}

impl EdgeLimits {
    /// The default caps without any rate limit: for embedding a replica (tests, benchmarks) where
    /// one client legitimately plays thousands of moves a second.
    pub fn unmetered() -> Self {
        EdgeLimits {
            create_game_per_address: Rate::UNLIMITED,
            act_per_address: Rate::UNLIMITED,
            act_per_token: Rate::UNLIMITED,
            observe_per_address: Rate::UNLIMITED,
            observe_per_token: Rate::UNLIMITED,
            ..EdgeLimits::default()
        }
    }
}

/// Token buckets, one per key, refilled continuously at the rate's average.
pub struct RateLimiter<K> {
    rate: Rate,
    buckets: Mutex<Buckets<K>>,
}

struct Buckets<K> {
    by_key: HashMap<K, Bucket>,
    last_sweep: Instant,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// How often full (idle) buckets are dropped, so the map only holds recent callers.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// A limiter allowing `rate` per key.
    pub fn new(rate: Rate) -> Self {
        RateLimiter {
            rate,
            buckets: Mutex::new(Buckets {
                by_key: HashMap::new(),
                last_sweep: Instant::now(),
            }),
        }
    }

    /// Takes one token from `key`'s bucket; false when it is empty (the caller is over the rate).
    pub fn try_acquire(&self, key: &K) -> bool {
        self.try_acquire_at(key, Instant::now())
    }

    /// [`RateLimiter::try_acquire`] at a given instant (for deterministic tests).
    pub fn try_acquire_at(&self, key: &K, now: Instant) -> bool {
        if self.rate.is_unlimited() {
            return true;
        }
        let burst = f64::from(self.rate.burst.max(1));
        let per_second = self.rate.per_second;
        let mut buckets = self.buckets.lock();
        if now.saturating_duration_since(buckets.last_sweep) >= SWEEP_EVERY {
            buckets.by_key.retain(|_, bucket| {
                let refilled = bucket.tokens
                    + now.saturating_duration_since(bucket.updated).as_secs_f64() * per_second;
                refilled < burst
            });
            buckets.last_sweep = now;
        }
        let bucket = buckets.by_key.entry(key.clone()).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * per_second).min(burst);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Counts open Observe streams per connection and per replica.
pub struct StreamCounter {
    per_connection_cap: usize,
    per_replica_cap: usize,
    state: Arc<StreamCounts>,
}

#[derive(Default)]
struct StreamCounts {
    total: AtomicUsize,
    by_connection: Mutex<HashMap<SocketAddr, usize>>,
}

/// Which cap refused a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamCap {
    /// The caller's connection has this many streams open (its cap).
    Connection(usize),
    /// The replica has this many streams open (its cap).
    Replica(usize),
}

/// One open stream; dropping it (when the stream's response body ends or is dropped) frees it.
pub struct StreamPermit {
    connection: Option<SocketAddr>,
    state: Arc<StreamCounts>,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        self.state.total.fetch_sub(1, Ordering::AcqRel);
        if let Some(connection) = self.connection {
            let mut by_connection = self.state.by_connection.lock();
            if let Some(count) = by_connection.get_mut(&connection) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    by_connection.remove(&connection);
                }
            }
        }
    }
}

impl StreamCounter {
    /// Stream counts capped per connection and per replica.
    pub fn new(per_connection_cap: usize, per_replica_cap: usize) -> Self {
        StreamCounter {
            per_connection_cap,
            per_replica_cap,
            state: Arc::default(),
        }
    }

    /// A permit for one more stream on `connection` (identified by the peer's socket address), or
    /// the cap that is reached.
    pub fn try_open(&self, connection: Option<SocketAddr>) -> Result<StreamPermit, StreamCap> {
        let total = self.state.total.fetch_add(1, Ordering::AcqRel) + 1;
        // From here on the permit owns one count, so every refusal below gives it back on drop.
        let mut permit = StreamPermit {
            connection: None,
            state: self.state.clone(),
        };
        if self.per_replica_cap > 0 && total > self.per_replica_cap {
            return Err(StreamCap::Replica(self.per_replica_cap));
        }
        if let Some(connection) = connection {
            let mut by_connection = self.state.by_connection.lock();
            let count = by_connection.entry(connection).or_insert(0);
            if self.per_connection_cap > 0 && *count >= self.per_connection_cap {
                if *count == 0 {
                    by_connection.remove(&connection);
                }
                return Err(StreamCap::Connection(self.per_connection_cap));
            }
            *count += 1;
            permit.connection = Some(connection);
        }
        Ok(permit)
    }

    /// Streams open on this replica now.
    pub fn open(&self) -> usize {
        self.state.total.load(Ordering::Acquire)
    }
}

/// A caller's token as a rate-limit key: a keyed hash, so the limiter never holds a secret.
pub fn token_key(hasher: &impl BuildHasher, authorization: &[u8]) -> u64 {
    hasher.hash_one(authorization)
}

/// The key of a peer address: IPv6 callers are grouped by /64, the block one host usually has.
pub fn address_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => {
            let mut segments = v6.segments();
            segments[4..].fill(0);
            IpAddr::V6(segments.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_and_without_burst() {
        assert_eq!("50:200".parse(), Ok(Rate::new(50.0, 200)));
        assert_eq!("2.5".parse(), Ok(Rate::new(2.5, 3)));
        assert!("0".parse::<Rate>().is_ok_and(|r| r.is_unlimited()));
        assert!("-1".parse::<Rate>().is_err());
        assert!("5:0".parse::<Rate>().is_err());
        assert!("fast".parse::<Rate>().is_err());
        assert_eq!(Rate::new(50.0, 200).to_string(), "50:200");
    }

    #[test]
    fn a_bucket_allows_its_burst_then_its_rate() {
        let limiter = RateLimiter::new(Rate::new(10.0, 5));
        let start = Instant::now();
        let allowed = (0..20)
            .filter(|_| limiter.try_acquire_at(&"a", start))
            .count();
        assert_eq!(allowed, 5, "the burst, all at once");
        assert!(
            limiter.try_acquire_at(&"b", start),
            "another key has its own bucket"
        );
        assert!(!limiter.try_acquire_at(&"a", start + Duration::from_millis(50)));
        assert!(limiter.try_acquire_at(&"a", start + Duration::from_millis(100)));
        let later = start + Duration::from_secs(60);
        let allowed = (0..20)
            .filter(|_| limiter.try_acquire_at(&"a", later))
            .count();
        assert_eq!(allowed, 5, "refilled to the burst, never beyond");
    }

    #[test]
    fn idle_buckets_are_swept() {
        let limiter = RateLimiter::new(Rate::new(1.0, 1));
        let start = Instant::now();
        for key in 0..100 {
            assert!(limiter.try_acquire_at(&key, start));
        }
        assert!(limiter.try_acquire_at(&1000, start + SWEEP_EVERY));
        let held = limiter.buckets.lock().by_key.len();
        assert_eq!(held, 1, "only the bucket in use is kept");
    }

    #[test]
    fn stream_caps_count_per_connection_and_per_replica() {
        let counter = StreamCounter::new(2, 3);
        let a: SocketAddr = "127.0.0.1:1000".parse().expect("address");
        let b: SocketAddr = "127.0.0.1:1001".parse().expect("address");
        let first = counter.try_open(Some(a)).expect("first on a");
        let _second = counter.try_open(Some(a)).expect("second on a");
        assert_eq!(
            counter.try_open(Some(a)).err(),
            Some(StreamCap::Connection(2))
        );
        let _third = counter.try_open(Some(b)).expect("first on b");
        assert_eq!(counter.try_open(Some(b)).err(), Some(StreamCap::Replica(3)));
        assert_eq!(counter.open(), 3, "refusals give their count back");
        drop(first);
        assert_eq!(counter.open(), 2);
        let _again = counter
            .try_open(Some(a))
            .expect("a freed stream can be reopened");
    }

    #[test]
    fn ipv6_callers_are_grouped_by_prefix() {
        let one: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("v6");
        let two: IpAddr = "2001:db8:1:2:bbbb::2".parse().expect("v6");
        assert_eq!(address_key(one), address_key(two));
        let v4: IpAddr = "192.0.2.7".parse().expect("v4");
        assert_eq!(address_key(v4), v4);
    }
}
