"""Kubernetes' and the reconcilers' own rules for what promoter renders: names and their
limits, ConfigMap keys and values, the CRD schemas and reference rules of Flux and Argo CD."""
