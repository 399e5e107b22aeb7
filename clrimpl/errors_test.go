package clrimpl

import (
	"errors"
	"fmt"
	"testing"
)

func TestSentinelsAreShortPayload(t *testing.T) {
	for _, tc := range []struct {
		err   error
		short bool
	}{
		{ErrShortPayload, true},
		{ErrUnterminatedString, true},
		{ErrCountTooLarge, true},
		{ErrPointerSize, false},
		{ErrUnknownEvent, false},
	} {
		if got := errors.Is(tc.err, ErrShortPayload); got != tc.short {
			t.Errorf("errors.Is(%v, ErrShortPayload) = %v, want %v", tc.err, got, tc.short)
		}
		if !errors.Is(tc.err, tc.err) {
			t.Errorf("errors.Is(%v, itself) = false", tc.err)
		}
		wrapped := NewDecodeError("clrevents", "E", "F", 1, tc.err)
		if got := errors.Is(wrapped, ErrShortPayload); got != tc.short {
			t.Errorf("errors.Is(DecodeError{%v}, ErrShortPayload) = %v, want %v", tc.err, got, tc.short)
		}
		if !errors.Is(wrapped, tc.err) {
			t.Errorf("errors.Is(DecodeError{%v}, %v) = false", tc.err, tc.err)
		}
		if !errors.Is(fmt.Errorf("outer: %w", wrapped), tc.err) {
			t.Errorf("errors.Is through fmt.Errorf wrapping of %v failed", tc.err)
		}
	}
	// The relation is one way: a plain short payload is not an unterminated
	// string, and the two short-payload kinds are distinct.
	if errors.Is(ErrShortPayload, ErrUnterminatedString) {
		t.Error("errors.Is(ErrShortPayload, ErrUnterminatedString) = true")
	}
	if errors.Is(ErrUnterminatedString, ErrCountTooLarge) || errors.Is(ErrCountTooLarge, ErrUnterminatedString) {
		t.Error("ErrUnterminatedString and ErrCountTooLarge match each other")
	}
}

func TestSentinelMessages(t *testing.T) {
	for err, want := range map[error]string{
		ErrShortPayload:       "payload too short",
		ErrUnterminatedString: "string has no terminator",
		ErrPointerSize:        "pointer size must be 4 or 8",
		ErrUnknownEvent:       "event not in schema",
		ErrCountTooLarge:      "count exceeds payload",
	} {
		if got := err.Error(); got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
}

func TestDecodeError(t *testing.T) {
	for _, tc := range []struct {
		e    *DecodeError
		want string
	}{
		{&DecodeError{"clrevents", "GCStart_V2", "Depth", 4, ErrShortPayload},
			`clrevents: GCStart_V2: field "Depth" at byte 4: payload too short`},
		{&DecodeError{"clrevents", "GCHeapStats", "Values[3].Name", 120, ErrUnterminatedString},
			`clrevents: GCHeapStats: field "Values[3].Name" at byte 120: string has no terminator`},
		{&DecodeError{"clrevents", "BulkType", "", 0, ErrUnknownEvent},
			`clrevents: BulkType: at byte 0: event not in schema`},
		{&DecodeError{"clrevents", "", "X", 2, ErrPointerSize},
			`clrevents: field "X" at byte 2: pointer size must be 4 or 8`},
		{&DecodeError{"clrevents", "E", "F", 7, nil},
			`clrevents: E: field "F" at byte 7: decode error`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() =\n%s\nwant\n%s", got, tc.want)
		}
		if tc.e.Unwrap() != tc.e.Err {
			t.Errorf("Unwrap() = %v, want %v", tc.e.Unwrap(), tc.e.Err)
		}
	}

	err := NewDecodeError("clrevents", "GCStart_V2", "Depth", 4, ErrShortPayload)
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("errors.As(%T, *DecodeError) = false", err)
	}
	want := DecodeError{Package: "clrevents", Event: "GCStart_V2", Field: "Depth", Offset: 4, Err: ErrShortPayload}
	if *de != want {
		t.Errorf("DecodeError = %+v, want %+v", *de, want)
	}
}
