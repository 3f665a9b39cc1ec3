module github.com/ratchet-go/ratchet/stores/mongodb

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/stretchr/testify v1.12.1
	go.mongodb.org/mongo-driver/v2 v2.10.0
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/xdg-go/scram v1.4.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

replace github.com/ratchet-go/ratchet/sdk => ../../sdk

replace github.com/ratchet-go/ratchet/internal/stored => ../../internal/stored
