// Package conformance holds the conformance suite of the generated
// clrevents decoders; it has no code of its own, only tests:
//
//   - payload fixtures: real payloads from every shared trace (first, last,
//     shortest and longest of each (provider, id, version)), kept in
//     ../../testdata/payloads so the suite runs on a fresh clone;
//   - a structural check: every CLR event of every trace decodes using
//     exactly its payload, with valid UTF-16 strings and counts that agree
//     with array sizes;
//   - TraceEvent baselines: the first event of each type that a PerfView
//     baseline lists (up to five per type for ETW) is compared field by
//     field with what TraceEvent printed, and the per-type counts too;
//   - the reference decoder (package schema/interp) must agree with every
//     generated decoder on value, bytes used and errors, over the fixtures
//     and under fuzzing (FuzzAgainstGenerated).
//
// Mismatches that are understood are listed in known_failures.txt, one per
// line with its reason; the suite fails on a mismatch not listed there and
// on a listed one that no longer happens.
//
// The full traces are read from ../../../shared/fixtures/traces when that
// folder exists; tests that need it skip with a reason otherwise.
package conformance
