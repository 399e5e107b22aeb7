package clrevents

// FamilyInfo describes a family of event types.
type FamilyInfo struct {
	// Name is the family's name: FamilyInfo{Name: "GCStart"} has the
	// types GCStartFields and GCStartEvent.
	Name string
	// Members are the family's event types, by provider, ID and version.
	Members []*EventInfo
}

// Families lists every family, by name.
func Families() []FamilyInfo { return familyTable[:] }
