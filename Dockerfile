# syntax=docker/dockerfile:1
#
# tokentrace as a container image: a static binary on a minimal base.
#
#   docker build -t tokentrace --build-arg VERSION=1.2.3 .
#   docker run --rm -v "$PWD:/work" tokentrace analyze results/ -o out --slo 'ttft<=500ms'
#
# Stage "build" compiles the CLI with cgo off (no libc needed at run time);
# the final stage holds the binary alone, on distroless/static (CA
# certificates, tzdata, a nonroot user; no shell). The image runs as the
# nonroot user in /work: mount the benchmark results there.
# internal/releasetest parses this file with BuildKit's parser and checks it.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# modules first: a source change does not download them again
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION empty: the version Go records from the build (formats.BuildVersion)
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w ${VERSION:+-X github.com/tokentrace/tokentrace/formats.Version=${VERSION}}" \
      -o /out/tokentrace ./cmd/tokentrace \
 && /out/tokentrace version

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/tokentrace /usr/local/bin/tokentrace
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/tokentrace"]
CMD ["--help"]
