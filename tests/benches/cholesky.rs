//! Benchmarks of the Cholesky updates (a placeholder until criterion benches land).

fn main() {}
