// Package readme holds the test that runs the commands README.md shows, on
// what a fresh clone has, so that none of them rots: go test ./test/readme.
package readme
