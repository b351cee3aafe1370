module github.com/memctl/memctl/bench

go 1.26.8

require (
	github.com/PowerDNS/lmdb-go v1.9.4
	github.com/google/go-cmp v0.7.0
	github.com/memctl/memctl v0.0.0-00010101000000-000000000000
	go.etcd.io/bbolt v1.3.11
	modernc.org/sqlite v1.34.5
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/ncruces/go-strftime v0.1.9 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.55.3 // indirect
	modernc.org/mathutil v1.6.0 // indirect
	modernc.org/memory v1.8.0 // indirect
)

replace github.com/memctl/memctl => ../
