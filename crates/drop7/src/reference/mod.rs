//! The plain reference implementation: row-major 49-byte boards, written to be
//! obviously faithful to the spec rather than fast. It is the in-process oracle
//! for the packed engine, the fast leaf and the fast search (tests and property
//! tests compare them), and the "before" arm of every benchmark.
pub mod engine;
pub mod leaf;
pub mod search;
