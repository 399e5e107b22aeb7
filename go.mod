module github.com/clrgo/clrevents

go 1.24.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/google/go-cmp v0.7.0
	github.com/google/pprof v0.0.0-20260604005048-7023385849c0
	gopkg.in/yaml.v3 v3.0.1
)
