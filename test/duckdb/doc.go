// Package duckdb tests the Parquet datasets of clrdump -format parquet
// with a real engine, DuckDB (through cgo), in a module of its own so that
// the main module never depends on it. Its tests build clrdump, write
// datasets of the traces in testdata (and of the shared traces when
// ../shared is beside the checkout), and check DuckDB's counts and sums
// against the JSON lines, and that the README's queries run as written.
//
// Run with: cd test/duckdb && go test ./...
package duckdb
