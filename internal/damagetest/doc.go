// Package damagetest holds tests that run every layer above the front
// door over garbled copies of the repository's traces (see
// TestLayersOnGarbledTraces): what a damaged capture gives a user of the
// reports, profiles, metrics and datasets must never be a panic, a memory
// blow-up or a value no trace could hold. It has no code of its own.
package damagetest
