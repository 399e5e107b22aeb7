module github.com/clrgo/clrevents/bench/peer

go 1.24.9

require (
	github.com/clrgo/clrevents v0.0.0
	github.com/pyroscope-io/dotnetdiag v1.2.1
)

require (
	github.com/google/pprof v0.0.0-20260604005048-7023385849c0 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
)

replace github.com/clrgo/clrevents => ../..
