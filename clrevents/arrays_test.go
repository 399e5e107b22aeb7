package clrevents

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// checkIndexPanic checks that fn panics as an out-of-range slice index does.
func checkIndexPanic(t *testing.T, what string, i int, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		var re runtime.Error
		if err, ok := r.(error); !ok || !errors.As(err, &re) || !strings.Contains(re.Error(), "index out of range") {
			t.Errorf("%s(%d): recovered %v, want an index out of range runtime error", what, i, r)
		}
	}()
	fn()
}
