// Package layers holds the test that keeps the module's packages in their
// layers (README, "Packages, by layer"), from what go list says they
// import. It has no code.
package layers
