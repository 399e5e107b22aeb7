//go:build !unix

package main

import "os"

// maxRSS is 0: no peak RSS here.
func maxRSS(*os.ProcessState) float64 { return 0 }
