module github.com/clrgo/clrevents

go 1.24

require (
	github.com/dave/jennifer v1.7.1
	github.com/google/go-cmp v0.7.0
	gopkg.in/yaml.v3 v3.0.1
)
