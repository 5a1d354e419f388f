# bash completion for notesfs(1)
# Install: source this file, or copy it to /usr/share/bash-completion/completions/notesfs.

# Completes a notes PATH by listing the database with `notesfs ls` (folders end in /).
_notesfs_paths() {
    local cur=$1 db=$2 dir prefix entries
    if [[ $cur == */* ]]; then
        dir=${cur%/*}
        prefix="$dir/"
    else
        dir=""
        prefix=""
    fi
    entries=$(notesfs ${db:+--db "$db"} -q ls -- "$dir" 2>/dev/null) || return
    local IFS=$'\n'
    COMPREPLY=($(compgen -P "$prefix" -W "$entries" -- "${cur##*/}"))
    compopt -o nospace -o filenames 2>/dev/null
}

_notesfs() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local global="--db --json -q --quiet -v --verbose -h --help --version"
    local commands="folder note ls query changes log history import export fsck help"

    # Find the command word, the action and the --db value typed so far.
    local i command="" action="" db=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --db) db=${words[i + 1]}; ((i++)) ;;
        --db=*) db=${words[i]#--db=} ;;
        -*) ;;
        *)
            if [[ -z $command ]]; then
                command=${words[i]}
            elif [[ -z $action && ($command == folder || $command == note || $command == history) ]]; then
                action=${words[i]}
            fi
            ;;
        esac
    done

    case $prev in
    --db | --into | --from)
        if [[ $prev == --db ]]; then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
        fi
        _notesfs_paths "$cur" "$db"
        return
        ;;
    --parent) _notesfs_paths "$cur" "$db"; return ;;
    --type | -t) COMPREPLY=($(compgen -W "Note Folder Attachment" -- "$cur")); return ;;
    --sort | -s)
        COMPREPLY=($(compgen -W "title -title name -name modificationDate -modificationDate creationDate -creationDate" -- "$cur"))
        return
        ;;
    --text | --limit | --since | --at) return ;;
    -o) return ;;
    esac

    local options=""
    case $command in
    "")
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global" -- "$cur"))
        else
            # A command, or the mount form: DB and MOUNTPOINT are directories.
            COMPREPLY=($(compgen -W "$commands" -- "$cur") $(compgen -d -- "$cur"))
        fi
        return
        ;;
    folder)
        [[ -z $action ]] && { COMPREPLY=($(compgen -W "new ls rm" -- "$cur")); return; }
        case $action in
        new) options="--parent" ;;
        rm) options="--dry-run -n" ;;
        esac
        ;;
    note)
        [[ -z $action ]] && { COMPREPLY=($(compgen -W "new cat edit rm mv log diff restore undelete" -- "$cur")); return; }
        case $action in
        new) options="--text --force -f" ;;
        cat | restore) options="--at" ;;
        esac
        ;;
    history)
        [[ -z $action ]] && { COMPREPLY=($(compgen -W "prune" -- "$cur")); return; }
        options="--dry-run -n"
        ;;
    log) options="--deleted --since" ;;
    ls) options="-l --long" ;;
    query) options="--type -t --sort -s --limit" ;;
    changes) options="--since" ;;
    import) options="--into" ;;
    export) options="--from" ;;
    fsck) options="--repair" ;;
    help) COMPREPLY=($(compgen -W "folder note ls query changes log history import export fsck" -- "$cur")); return ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options $global" -- "$cur"))
        return
    fi
    case $command in
    import | export)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "$cur"))
        ;;
    folder | note | ls) _notesfs_paths "$cur" "$db" ;;
    esac
}

complete -F _notesfs notesfs
