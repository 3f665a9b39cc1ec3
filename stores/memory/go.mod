module github.com/ratchet-go/ratchet/stores/memory

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/tck v0.1.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/ratchet-go/ratchet/sdk => ../../sdk

replace github.com/ratchet-go/ratchet/tck => ../../tck

replace github.com/ratchet-go/ratchet/internal/stored => ../../internal/stored

replace github.com/ratchet-go/ratchet/internal/jobjson => ../../internal/jobjson

replace github.com/ratchet-go/ratchet/chaos => ../../chaos

replace github.com/ratchet-go/ratchet/compare/river => ../../compare/river

replace github.com/ratchet-go/ratchet/coordination/internal/hub => ../../coordination/internal/hub

replace github.com/ratchet-go/ratchet/coordination/ratchetnats => ../../coordination/ratchetnats

replace github.com/ratchet-go/ratchet/coordination/ratchetredis => ../../coordination/ratchetredis

replace github.com/ratchet-go/ratchet/dashboard => ../../dashboard

replace github.com/ratchet-go/ratchet/ddl => ../../ddl

replace github.com/ratchet-go/ratchet/encryption => ../../encryption

replace github.com/ratchet-go/ratchet/engine => ../../engine

replace github.com/ratchet-go/ratchet/internal/dbtest => ../../internal/dbtest

replace github.com/ratchet-go/ratchet/internal/tcpproxy => ../../internal/tcpproxy

replace github.com/ratchet-go/ratchet/metrics/ratchetprom => ../../metrics/ratchetprom

replace github.com/ratchet-go/ratchet/simtest => ../../simtest

replace github.com/ratchet-go/ratchet/stores/internal/sqlcore => ../internal/sqlcore

replace github.com/ratchet-go/ratchet/stores/mongodb => ../mongodb

replace github.com/ratchet-go/ratchet/stores/mongodb/ferrettest => ../mongodb/ferrettest

replace github.com/ratchet-go/ratchet/stores/mysql => ../mysql

replace github.com/ratchet-go/ratchet/stores/oracle => ../oracle

replace github.com/ratchet-go/ratchet/stores/postgres => ../postgres

replace github.com/ratchet-go/ratchet/stores/sqlite => ../sqlite

replace github.com/ratchet-go/ratchet/stores/sqlserver => ../sqlserver

replace github.com/ratchet-go/ratchet/tools => ../../tools

replace github.com/ratchet-go/ratchet/tracing/ratchetotel => ../../tracing/ratchetotel

replace github.com/ratchet-go/ratchet/internal/nodecore => ../../internal/nodecore
