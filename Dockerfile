# Build the manager binary.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY api/ api/
COPY controllers/ controllers/
COPY internal/ internal/
COPY version/ version/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath \
    -ldflags "-X github.com/s3gw-tech/s3gw-remediation/version.Version=${VERSION}" \
    -o manager ./cmd/manager
# The pre-pull pods' program (docs/warm-replacement.md): small, static, run
# in the gateways' images by any user.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w" \
    -o prepull ./cmd/prepull

# A distroless, non-root runtime image.
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager .
COPY --from=builder /workspace/prepull .
USER 65532:65532
ENTRYPOINT ["/manager"]
