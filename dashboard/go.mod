module github.com/ratchet-go/ratchet/dashboard

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/sdk v0.0.0
	github.com/stretchr/testify v1.12.1
)

replace github.com/ratchet-go/ratchet/sdk => ../sdk
