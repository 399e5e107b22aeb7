package gen

// SetVersion makes Generate write code for version v of clrimpl, as the
// clrgen of another version of the module would, until the returned
// function restores it.
func SetVersion(v int) (restore func()) {
	old := genVersion
	genVersion = v
	return func() { genVersion = old }
}
