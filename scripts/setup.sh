#!/usr/bin/env bash
# Installs missing Debian packages, configures build/ once and builds incrementally. Nothing else.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_setup
