"""Allis' rules as a certificate (book format version 2, kind 2; docs/book-format.md, "Kind 2"):
what a chosen set proves, its check by the definitions alone, and its bytes."""

from pndb.games.connect4.definitions import (
    NO_THREAT, Certificate, Combination, Instance, Rule, _cells, _dead, _setting, _value, applied_of,
    board_of, compatible,
)  # fmt: skip


CERTIFICATE_KIND = 2  # book format version 2, kind 2


class CertificateError(ValueError):
    """A certificate that does not prove what it claims."""


def proves(cert):
    """The value a certificate claims (it holds where check_certificate says so)."""
    return _value(cert.controller, cert.threat)


def check_certificate(game, a, b, cert):
    """The value a certificate proves at (a, b), or CertificateError saying why it proves
    nothing. The definitions are those of docs/book-format.md, "Kind 2"."""
    a, b = int(a), int(b)
    setting = _setting(board_of(game, a, b), a, b)
    if setting is None:
        raise CertificateError("the game is over")
    if cert.controller != setting.controller:
        raise CertificateError(f"the controller is player {setting.controller}, not {cert.controller}")
    if cert.threat not in setting.threats:
        raise CertificateError(f"{cert.threat} is not a win condition here (those are {setting.threats})")
    bd = board_of(game, a, b, cert.threat)
    opponent = (a | b) & ~setting.mine
    applied = []
    for inst in cert.instances:
        x = applied_of(bd, inst, opponent)
        if x is None:
            raise CertificateError(f"{inst.rule.name} {inst.cells} is not an instance here")
        applied.append(x)
    for i, x in enumerate(applied):
        for y in applied[i + 1 :]:
            if not compatible(bd, x, y):
                raise CertificateError(f"{x.instance} and {y.instance} are not compatible")
    dead = _dead(bd, cert.threat)
    for g in bd.lines:
        if not g & setting.mine and not g & dead and not any(x.solves(g) for x in applied):
            raise CertificateError(f"group {_cells(g)} is not refuted")
    return _value(setting.controller, cert.threat)


COMBINATION_BYTE = 254  # T of a threat combination, followed by its cells x and low


def encode_certificate(verdict):
    """The kind 2 payload of a verdict's certificate (docs/book-format.md, "Kind 2")."""
    cert = verdict.certificate
    if isinstance(cert.threat, Combination):
        out = bytearray([cert.controller, COMBINATION_BYTE, cert.threat.x, cert.threat.low])
    else:
        out = bytearray([cert.controller, 255 if cert.threat == NO_THREAT else cert.threat])
    out.append(len(cert.instances))
    for inst in cert.instances:
        out += bytes([int(inst.rule), len(inst.cells), *inst.cells])
    return bytes(out)


def decode_certificate(data):
    """The Certificate of a kind 2 payload; CertificateError when it is malformed."""
    if len(data) < 3 or data[0] not in (1, 2) or data[1] == COMBINATION_BYTE and len(data) < 5:
        raise CertificateError("kind 2 payload: bad header")
    if data[1] == COMBINATION_BYTE:
        threat, pos = Combination(data[2], data[3]), 5
    else:
        threat, pos = NO_THREAT if data[1] == 255 else data[1], 3
    instances_ = []
    for _ in range(data[pos - 1]):
        if pos + 2 > len(data):
            raise CertificateError("kind 2 payload: truncated")
        code, m = data[pos], data[pos + 1]
        if code not in Rule._value2member_map_ or pos + 2 + m > len(data):
            raise CertificateError("kind 2 payload: bad instance")
        instances_.append(Instance(Rule(code), tuple(data[pos + 2 : pos + 2 + m])))
        pos += 2 + m
    if pos != len(data):
        raise CertificateError("kind 2 payload: trailing bytes")
    return Certificate(data[0], threat, tuple(instances_))
