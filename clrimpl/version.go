package clrimpl

// The compile-time check between generated code and this package. Every
// generated package starts with
//
//	const (
//		_ = clrimpl.RuntimeTooOld(clrimpl.MaxVersion - 1)
//		_ = clrimpl.GeneratedCodeTooOld(1 - clrimpl.MinVersion)
//	)
//
// where 1 is the GenVersion of the clrgen that wrote it. Both constants are
// unsigned, so an expression below zero does not compile, and the compiler
// names the type that says what is wrong:
//
//	constant -1 overflows clrimpl.RuntimeTooOld
//
// The code was generated for a newer clrimpl than the one it is built
// with: update the github.com/clrgo/clrevents module, or regenerate the
// package with the clrgen of the module it builds with.
//
//	constant -1 overflows clrimpl.GeneratedCodeTooOld
//
// The clrimpl it is built with no longer supports code that old:
// regenerate the package with the clrgen of the module it builds with.

// The versions of generated code. GenVersion grows when clrgen's output
// starts to need something clrimpl did not have; MinVersion grows when
// clrimpl drops what older generated code needs.
const (
	// GenVersion is the version of the code this module's clrgen
	// generates.
	GenVersion = 2
	// MinVersion is the oldest version of generated code this clrimpl
	// supports.
	MinVersion = 1
	// MaxVersion is the newest version of generated code this clrimpl
	// supports.
	MaxVersion = GenVersion
)
