module github.com/ratchet-go/ratchet/dashboard

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/internal/jobjson v0.1.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/stores/memory v0.1.0
	github.com/ratchet-go/ratchet/stores/sqlite v0.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/crypto v0.58.0
)

require (
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/ratchet-go/ratchet/ddl v0.1.0 // indirect
	github.com/ratchet-go/ratchet/internal/stored v0.1.0 // indirect
	github.com/ratchet-go/ratchet/stores/internal/sqlcore v0.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

replace (
	github.com/ratchet-go/ratchet/ddl => ../ddl
	github.com/ratchet-go/ratchet/sdk => ../sdk
	github.com/ratchet-go/ratchet/stores/internal/sqlcore => ../stores/internal/sqlcore
	github.com/ratchet-go/ratchet/stores/memory => ../stores/memory
	github.com/ratchet-go/ratchet/stores/sqlite => ../stores/sqlite
	github.com/ratchet-go/ratchet/tck => ../tck
)

replace github.com/ratchet-go/ratchet/internal/stored => ../internal/stored

replace github.com/ratchet-go/ratchet/internal/jobjson => ../internal/jobjson

replace github.com/ratchet-go/ratchet/chaos => ../chaos

replace github.com/ratchet-go/ratchet/compare/river => ../compare/river

replace github.com/ratchet-go/ratchet/coordination/internal/hub => ../coordination/internal/hub

replace github.com/ratchet-go/ratchet/coordination/ratchetnats => ../coordination/ratchetnats

replace github.com/ratchet-go/ratchet/coordination/ratchetredis => ../coordination/ratchetredis

replace github.com/ratchet-go/ratchet/encryption => ../encryption

replace github.com/ratchet-go/ratchet/engine => ../engine

replace github.com/ratchet-go/ratchet/internal/dbtest => ../internal/dbtest

replace github.com/ratchet-go/ratchet/internal/tcpproxy => ../internal/tcpproxy

replace github.com/ratchet-go/ratchet/metrics/ratchetprom => ../metrics/ratchetprom

replace github.com/ratchet-go/ratchet/simtest => ../simtest

replace github.com/ratchet-go/ratchet/stores/mongodb => ../stores/mongodb

replace github.com/ratchet-go/ratchet/stores/mongodb/ferrettest => ../stores/mongodb/ferrettest

replace github.com/ratchet-go/ratchet/stores/mysql => ../stores/mysql

replace github.com/ratchet-go/ratchet/stores/oracle => ../stores/oracle

replace github.com/ratchet-go/ratchet/stores/postgres => ../stores/postgres

replace github.com/ratchet-go/ratchet/stores/sqlserver => ../stores/sqlserver

replace github.com/ratchet-go/ratchet/tools => ../tools

replace github.com/ratchet-go/ratchet/tracing/ratchetotel => ../tracing/ratchetotel

replace github.com/ratchet-go/ratchet/internal/nodecore => ../internal/nodecore
