package clrevents

import "testing"

// TestKeywordAliases: the .NET 10 manifest renamed GCHeapCollectKeyword
// ManagedHeapCollectKeyword (same mask); the former name stays, as an alias
// (overrides.yaml keywordAliases), so code written against a package
// generated from an older manifest still compiles. The keyword is shown by
// its current name.
func TestKeywordAliases(t *testing.T) {
	k := RuntimeGCHeapCollectKeyword
	if k != RuntimeManagedHeapCollectKeyword || uint64(k) != 0x800000 {
		t.Errorf("RuntimeGCHeapCollectKeyword is %#x, want RuntimeManagedHeapCollectKeyword (0x800000)", uint64(k))
	}
	if got := k.String(); got != "ManagedHeapCollectKeyword" {
		t.Errorf("String() = %q, want ManagedHeapCollectKeyword", got)
	}
}
