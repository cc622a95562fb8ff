# syntax=docker/dockerfile:1
# Every process of the system, built from the repository root (the context must hold pkg/
# and services/contracts, which each module reaches through its replace directives).
# MODULE and PROCESS are a process's "module" and "name" in tools/registry/processes.json;
# skaffold.yaml passes them for each artifact:
#   docker build --build-arg MODULE=services/orders --build-arg PROCESS=orders -t partnerapi/orders .

FROM golang:1.26 AS build
ARG MODULE
ARG PROCESS
WORKDIR /src
# Each module builds on its own (GOWORK=off).
ENV CGO_ENABLED=0 GOWORK=off GOTOOLCHAIN=local
# Module files first: dependency downloads stay cached until go.mod/go.sum change.
COPY pkg/go.mod pkg/go.sum* pkg/
COPY services/contracts/go.mod services/contracts/go.sum* services/contracts/
COPY ${MODULE}/go.mod ${MODULE}/go.sum* ${MODULE}/
RUN --mount=type=cache,target=/go/pkg/mod \
    cd "${MODULE}" && go mod download
COPY pkg/ pkg/
COPY services/contracts/ services/contracts/
COPY ${MODULE}/ ${MODULE}/
# The gateway compiles in its /docs pages: build output of make apidocs (skaffold runs it first).
RUN if [ "${PROCESS}" = gateway ] && [ ! -s gateway/internal/apidocs/pages/a.html ]; then \
      echo "gateway/internal/apidocs/pages holds no pages: run make apidocs, then build the image" >&2; exit 1; fi
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    cd "${MODULE}" && go build -trimpath -ldflags="-s -w" -o /out/process "./cmd/${PROCESS}"

FROM gcr.io/distroless/static-debian12:nonroot
# The binary has one name in every image, so the entrypoint needs no build argument
# (exec-form ENTRYPOINT does not expand them).
COPY --from=build /out/process /process
USER 65532:65532
ENV HTTP_ADDR=:8080
EXPOSE 8080
ENTRYPOINT ["/process"]
CMD ["serve"]
