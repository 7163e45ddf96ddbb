# SPDX-License-Identifier: MIT
# `make format-check`: the lines of C files changed since FORMAT_BASE (the
# last commit's parent unless told, e.g. FORMAT_BASE=origin/main) checked
# against .clang-format with git clang-format --diff, so old code is never
# reformatted wholesale; blanks inside a line (tab-aligned comments and
# initialisers, which clang-format cannot keep) are left to the author
# (mk/format-check.awk). `make format` applies clang-format's layout to the
# same lines. CI runs format-check (.ci/run) with FORMAT_STRICT=0: the
# differences are shown but do not fail the run, because clang-format 14
# cannot keep two house habits (enums and pointer lists packed by hand, one
# registry entry a line) and flagged 7 of 12 recent commits for them alone.

FORMAT_BASE ?= HEAD~1
FORMAT_STRICT ?= 1
FORMAT_PKGS := clang-format
FORMAT_PATHS := src include lib tests bench fuzz

format-deps:
	$(call deb_need,format-check,$(FORMAT_PKGS))

format-check: format-deps
	@if ! git rev-parse -q --verify '$(FORMAT_BASE)^{commit}' >/dev/null; then \
		echo "format-check: no commit $(FORMAT_BASE) here (a shallow clone?): nothing to check"; exit 0; \
	fi; \
	if git clang-format --style=file --extensions c,h --diff '$(FORMAT_BASE)' -- $(FORMAT_PATHS) | \
		awk -f mk/format-check.awk; then \
		echo "format-check: the C lines changed since $(FORMAT_BASE) follow .clang-format"; \
	else \
		echo "format-check: the lines above differ from .clang-format; 'make format FORMAT_BASE=$(FORMAT_BASE)' fixes them" >&2; \
		[ "$(FORMAT_STRICT)" = 0 ] && echo "format-check: advisory (FORMAT_STRICT=0), not a failure" || exit 1; \
	fi

format: format-deps
	@git clang-format --style=file --extensions c,h '$(FORMAT_BASE)' -- $(FORMAT_PATHS)

.PHONY: format format-check format-deps
