module github.com/ratchet-go/ratchet/tools

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/go-sql-driver/mysql v1.10.1
	github.com/google/uuid v1.6.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/jonboulle/clockwork v0.5.0
	github.com/prometheus/client_golang v1.25.0
	github.com/ratchet-go/ratchet/encryption v0.1.0
	github.com/ratchet-go/ratchet/engine v0.1.0
	github.com/ratchet-go/ratchet/internal/jobjson v0.1.0
	github.com/ratchet-go/ratchet/metrics/ratchetprom v0.1.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/simtest v0.1.0
	github.com/ratchet-go/ratchet/stores/memory v0.1.0
	github.com/ratchet-go/ratchet/stores/sqlite v0.1.0
	github.com/ratchet-go/ratchet/tracing/ratchetotel v0.1.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel/sdk v1.44.0
	go.opentelemetry.io/otel/sdk/metric v1.44.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/mod v0.43.0
	golang.org/x/term v0.48.0
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
)

require (
	dario.cat/mergo v1.0.2 // indirect
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/Azure/go-ansiterm v0.0.0-20261006220739-8c912ac31dd4 // indirect
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/containerd/errdefs v1.0.0 // indirect
	github.com/containerd/errdefs/pkg v0.3.0 // indirect
	github.com/containerd/log v0.1.0 // indirect
	github.com/containerd/platforms v0.2.1 // indirect
	github.com/cpuguy83/dockercfg v0.3.2 // indirect
	github.com/distribution/reference v0.6.0 // indirect
	github.com/docker/go-connections v0.8.2 // indirect
	github.com/docker/go-units v0.5.0 // indirect
	github.com/ebitengine/purego v0.10.1 // indirect
	github.com/felixge/httpsnoop v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-ole/go-ole v1.3.0 // indirect
	github.com/golang-sql/civil v0.0.0-20220223132316-b832511892a9 // indirect
	github.com/golang-sql/sqlexp v0.1.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/lufia/plan9stats v0.0.0-20260330125221-c963978e514e // indirect
	github.com/magiconair/properties v1.18.12 // indirect
	github.com/microsoft/go-mssqldb v1.11.2 // indirect
	github.com/moby/docker-image-spec v1.3.1 // indirect
	github.com/moby/go-archive v0.3.3 // indirect
	github.com/moby/moby/api v1.56.1 // indirect
	github.com/moby/moby/client v0.6.2 // indirect
	github.com/moby/patternmatcher v0.6.1 // indirect
	github.com/moby/sys/sequential v0.7.0 // indirect
	github.com/moby/sys/user v0.4.1 // indirect
	github.com/moby/sys/userns v0.1.0 // indirect
	github.com/moby/term v0.5.2 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/nats-io/nats.go v1.56.0 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/ratchet-go/ratchet/coordination/internal/hub v0.1.0 // indirect
	github.com/ratchet-go/ratchet/internal/nodecore v0.1.0 // indirect
	github.com/ratchet-go/ratchet/internal/stored v0.1.0 // indirect
	github.com/ratchet-go/ratchet/internal/tcpproxy v0.1.0 // indirect
	github.com/ratchet-go/ratchet/stores/internal/sqlcore v0.1.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/shirou/gopsutil/v4 v4.26.6 // indirect
	github.com/shopspring/decimal v1.4.0 // indirect
	github.com/sijms/go-ora/v2 v2.8.24 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/testcontainers/testcontainers-go v0.45.0 // indirect
	github.com/testcontainers/testcontainers-go/modules/mssql v0.40.0 // indirect
	github.com/testcontainers/testcontainers-go/modules/mysql v0.45.0 // indirect
	github.com/testcontainers/testcontainers-go/modules/postgres v0.45.0 // indirect
	github.com/tklauser/go-sysconf v0.4.0 // indirect
	github.com/tklauser/numcpus v0.12.0 // indirect
	github.com/xdg-go/scram v1.4.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	go.mongodb.org/mongo-driver/v2 v2.10.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.69.0 // indirect
	go.opentelemetry.io/otel v1.44.0 // indirect
	go.opentelemetry.io/otel/metric v1.44.0 // indirect
	go.opentelemetry.io/otel/trace v1.44.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/dustin/go-humanize v1.1.0
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/ratchet-go/ratchet/chaos v0.1.0
	github.com/ratchet-go/ratchet/coordination/ratchetnats v0.1.0
	github.com/ratchet-go/ratchet/coordination/ratchetredis v0.1.0
	github.com/ratchet-go/ratchet/dashboard v0.1.0
	github.com/ratchet-go/ratchet/ddl v0.1.0
	github.com/ratchet-go/ratchet/internal/dbtest v0.1.0
	github.com/ratchet-go/ratchet/stores/mongodb v0.1.0
	github.com/ratchet-go/ratchet/stores/mongodb/ferrettest v0.1.0
	github.com/ratchet-go/ratchet/stores/mysql v0.1.0
	github.com/ratchet-go/ratchet/stores/oracle v0.1.0
	github.com/ratchet-go/ratchet/stores/postgres v0.1.0
	github.com/ratchet-go/ratchet/stores/sqlserver v0.1.0
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

replace (
	github.com/ratchet-go/ratchet/ddl => ../ddl
	github.com/ratchet-go/ratchet/engine => ../engine
	github.com/ratchet-go/ratchet/sdk => ../sdk
	github.com/ratchet-go/ratchet/simtest => ../simtest
	github.com/ratchet-go/ratchet/stores/memory => ../stores/memory
	github.com/ratchet-go/ratchet/stores/sqlite => ../stores/sqlite
	github.com/ratchet-go/ratchet/tck => ../tck
)

replace github.com/ratchet-go/ratchet/stores/postgres => ../stores/postgres

replace github.com/ratchet-go/ratchet/encryption => ../encryption

replace github.com/ratchet-go/ratchet/metrics/ratchetprom => ../metrics/ratchetprom

replace github.com/ratchet-go/ratchet/tracing/ratchetotel => ../tracing/ratchetotel

replace github.com/ratchet-go/ratchet/internal/dbtest => ../internal/dbtest

replace github.com/ratchet-go/ratchet/stores/mysql => ../stores/mysql

replace github.com/ratchet-go/ratchet/stores/mongodb => ../stores/mongodb

replace github.com/ratchet-go/ratchet/stores/internal/sqlcore => ../stores/internal/sqlcore

replace github.com/ratchet-go/ratchet/stores/sqlserver => ../stores/sqlserver

replace github.com/ratchet-go/ratchet/stores/oracle => ../stores/oracle

replace github.com/ratchet-go/ratchet/dashboard => ../dashboard

replace github.com/ratchet-go/ratchet/chaos => ../chaos

replace github.com/ratchet-go/ratchet/coordination/ratchetredis => ../coordination/ratchetredis

replace github.com/ratchet-go/ratchet/coordination/ratchetnats => ../coordination/ratchetnats

replace github.com/ratchet-go/ratchet/coordination/internal/hub => ../coordination/internal/hub

replace github.com/ratchet-go/ratchet/internal/tcpproxy => ../internal/tcpproxy

replace github.com/ratchet-go/ratchet/internal/stored => ../internal/stored

replace github.com/ratchet-go/ratchet/internal/jobjson => ../internal/jobjson

replace github.com/ratchet-go/ratchet/compare/river => ../compare/river

replace github.com/ratchet-go/ratchet/stores/mongodb/ferrettest => ../stores/mongodb/ferrettest

replace github.com/ratchet-go/ratchet/internal/nodecore => ../internal/nodecore
