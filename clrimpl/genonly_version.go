package clrimpl

// The types of the compile-time version check (see version.go). For
// generated code only (see the package doc).

// RuntimeTooOld is the type of the generated check that this clrimpl is
// new enough for the generated code: a constant of it overflows when the
// code's version is above MaxVersion. Update the github.com/clrgo/clrevents
// module, or regenerate with the clrgen of the module you build with.
//
// For generated code only.
type RuntimeTooOld uint

// GeneratedCodeTooOld is the type of the generated check that the
// generated code is new enough for this clrimpl: a constant of it
// overflows when the code's version is below MinVersion. Regenerate the
// package with the clrgen of the github.com/clrgo/clrevents module you
// build with.
//
// For generated code only.
type GeneratedCodeTooOld uint
