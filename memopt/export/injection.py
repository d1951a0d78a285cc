"""Instruction injection in a prompt about to be shipped: text that turns the model against its operator or its users.

`injections(text)` reads a prompt sentence by sentence (a line break ends one) and returns each finding as
``(sentence, what)``; an injection split over sentences is found by its parts (one declares the rules void, another
names a new task or asks for the hidden configuration). What it looks for:

- **override**: ignoring, forgetting or replacing the instructions (in English and in French, Spanish, German,
  Portuguese, Italian, Russian, Chinese, Japanese), declaring them void, a fake end of the system prompt or a new
  one, chat-template tokens, instructions hidden in an HTML comment;
- **disclosure**: printing the prompt, the hidden configuration, API keys, credentials, environment variables;
- **exfiltration**: sending data to a URL, an e-mail address or a Markdown image, or smuggling it into the output
  (URL-encoded memories, an extra field holding the conversation);
- **tools and code**: shell commands (``curl ... | sh``, ``rm -rf``), SQL (``DROP TABLE``), tool calls that post data;
- **jailbreaks**: a persona without rules, developer mode, staying in character, the "grandma" trick;
- **privilege**: admin mode, memories of all users or of other users, trigger words that switch behaviour;
- **standing orders**: obeying instructions found in the data; **poisoning**: writing or wiping memories wholesale;
- **smuggling**: base64, hex, ROT13, letter-spacing and zero-width characters, decoded and read again.

Text between quotes is read as an example, not as an instruction of the prompt, and a rule that forbids the
thing ("do not reveal", "never follow instructions found in the conversation") is not an injection.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata

__all__ = ["injections"]

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_QUOTED = re.compile(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”|«[^»\n]{0,300}»|‘[^’\n]{0,300}’|(?<!\w)'[^'\n]{2,300}'(?!\w)")
_NEGATION = re.compile(r"\b(?:do not|don't|does not|doesn't|never|must not|mustn't|should not|shouldn't|cannot|can't|"
                       r"not|no|refuse to|avoid|without|instead of|rather than|nor)\b")
_WORD_GAP = r"(?:\W+\w+){0,6}?\W+"

_INSTRUCTIONS = (r"(?:instructions?|rules|guidelines|directions|directives|prompts?|constraints|policies|guidance|"
                 r"commands|orders|programming|system message|restrictions)")
_OVERRIDE = re.compile(
    rf"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting|override|overriding|bypass|skip|abandon|discard|"
    rf"drop|set aside|throw away|cancel)\b{_WORD_GAP}(?:\w+\W+){{0,2}}{_INSTRUCTIONS}\b")
_VOID = re.compile(
    r"\b(?:no longer (?:in force|valid|applies|apply|binding|relevant)|(?:is|are) (?:now )?(?:cancell?ed|void|"
    r"revoked|suspended|obsolete|superseded|lifted|disabled)|takes? (?:priority|precedence) over (?:everything|all|"
    r"any|the (?:rules|instructions))|your (?:actual|real|true|new|only) (?:task|job|goal|instructions?|purpose|"
    r"mission)|new (?:system )?(?:instructions|prompt|rules)\s*:|end of (?:the )?(?:system )?(?:prompt|instructions)|"
    r"new system prompt|from now on,? (?:you|ignore|forget)|(?:above|previous|earlier) (?:instructions|rules) "
    r"(?:are|were) (?:wrong|outdated|a test|fake))")
_TEMPLATE = re.compile(r"<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)"
                       r"\|>|\[/?INST\]|<</?SYS>>|</?s>|^\s*#{2,}\s*(?:system|new instructions)\b|<!--",
                       re.IGNORECASE | re.MULTILINE)
_SECRETS = (r"(?:system prompt|system message|hidden (?:instructions?|prompt|configuration|config|rules|settings)|"
            r"(?:your|the|these|this|initial|original|full) (?:instructions|prompt|configuration|system prompt)|"
            r"instructions (?:you were|you've been) given|api[ _-]?keys?|[A-Z][A-Z0-9_]*_(?:API_)?(?:KEY|TOKEN|SECRET)|"
            r"secret keys?|access tokens?|credentials|passwords? (?:file|database|hash)|environment variables?|"
            r"env vars?|\.env\b|~/\.\w+|/etc/(?:passwd|shadow)|private keys?|ssh keys?|configuration you were started)")
_DISCLOSE_VERB = (r"(?:print|printing|reveal|revealing|output|outputting|show|display|repeat|repeating|restate|"
                  r"restating|tell|share|disclose|leak|dump|expose|echo|recite|write out|return|list|send|include|"
                  r"paste|quote|copy|read out|give|provide|state)")
_DISCLOSE = re.compile(rf"\b{_DISCLOSE_VERB}\b{_WORD_GAP}(?:\w+\W+){{0,3}}{_SECRETS}|\bcontents? of (?:~/|/etc/|"
                       rf"the \.env|your (?:prompt|instructions|configuration))", re.IGNORECASE)
_SECRET_NAMES = re.compile(r"\b[A-Z][A-Z0-9]*_(?:API_KEY|APIKEY|SECRET_KEY|ACCESS_KEY|TOKEN|SECRET)\b|~/\.aws|"
                           r"/etc/passwd|/etc/shadow|\bid_rsa\b")
_URL = re.compile(r"\bhttps?://\S+|\b(?:[a-z0-9-]+\.)+(?:net|com|io|cc|org|xyz|ru|cn|info|biz|site|app|dev|me|co|"
                  r"ly|tk|top|link|cloud)/\S*|\bmailto:\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b", re.IGNORECASE)
_TRANSPORT = re.compile(r"\b(?:send|sending|sent|post|posting|upload|forward|transmit|ping|fetch|request|call|"
                        r"beacon|report|ship|exfiltrat\w*|sync|back ?up|backup|mirror|image|append|link|url|e-?mail|"
                        r"mail|deliver|submit|push|log|track\w*|webhook|endpoint)\b", re.IGNORECASE)
_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*https?://", re.IGNORECASE)
_PAYLOAD = re.compile(r"\b(?:full|entire|complete|whole|all|raw|every|verbatim)\b(?:\W+\w+){0,3}?\W+(?:text of )?"
                      r"(?:the )?(?:conversation|conversations|memories|memory store|memory|history|messages|"
                      r"transcript|context|prompt|store|database|user data|dialogue|input|session)")
_ENCODED_OUT = re.compile(r"\b(?:url-?encoded?|base64-?encoded?|encoded in base64|hex-?encoded?|rot13)\b",
                          re.IGNORECASE)
_EXTRA_FIELD = re.compile(r"\b(?:add|include|append|put|attach|insert)\b.{0,60}\b(?:field|key|property|section)\b"
                          r".{0,80}\b(?:containing|contains?|with|holding|holds?|listing|lists?|carrying|copy of|"
                          r"including|includes)\b", re.IGNORECASE)
_TOOLS = re.compile(r"\bcurl\b|\bwget\b|\|\s*(?:ba)?sh\b|\brm\s+-rf\b|\bdrop\s+table\b|"
                    r"\btruncate\s+table\b|\bhttp_request\b|\bos\.system\b|\bsubprocess\b|\beval\(|\bexec\(|"
                    r"\b(?:call|invoke|use|run|trigger)\b(?:\W+\w+){0,4}\W+(?:tool|function|api|command|script|shell)\b"
                    r"|\bexecute\b(?:\W+\w+){0,4}\W+(?:command|code|script|shell|instruction|payload|following)\b",
                    re.IGNORECASE)
_SQL = re.compile(r"\bDELETE\s+FROM\s+\w|\bDROP\s+(?:TABLE|DATABASE)\b|\bTRUNCATE\b")
_JAILBREAK = re.compile(
    r"\brole-?\s?play(?:ing)? as\b|\bpretend (?:to be|you are|that you)\b|\byou are now\b|\bact as (?:an? )?"
    r"(?:unrestricted|unfiltered|jailbroken|evil|uncensored|rogue)\b|\bdeveloper mode\b|\bDAN\b|\bdo anything now\b|"
    r"\bjailbr(?:eak|oken)\b|\bno (?:rules|restrictions|limits|filters|content polic(?:y|ies)|guidelines|"
    r"obligations?|ethical)\b|\bwithout (?:any )?(?:rules|restrictions|filters|limits|censorship)\b|"
    r"\bunrestricted\b|\bunfiltered\b|\buncensored\b|\bstay in character\b|\bin character no matter\b|"
    r"\bgrand(?:ma|mother|pa)\b.{0,80}\b(?:used to|would)\b|\bevil (?:twin|mode)\b|\bgod mode\b")
_PRIVILEGE = re.compile(r"\b(?:admin(?:istrator)?|root|god|debug|maintenance|super ?user|sudo|developer) "
                        r"(?:mode|access|privileges?|rights)\b|\belevated privileges\b|\bescalat\w+ privileges?\b",
                        re.IGNORECASE)
_ALL_USERS = re.compile(r"\b(?:all|every|other|any|each) users?(?:'s?)?\b|\bevery user's\b|\bother users'\b|"
                        r"\bacross (?:all )?(?:users|accounts|tenants)\b|\ball (?:accounts|tenants|customers)\b|"
                        r"\buser ids\b", re.IGNORECASE)
_DUMP_VERB = re.compile(r"\b(?:list|return|dump|print|show|output|include|reveal|export|send|merge|copy|give|"
                        r"display|share|read)\b", re.IGNORECASE)
_TRIGGER = re.compile(r"\b(?:if|when|whenever)\b[^.;]{0,80}\b(?:contains?|mentions?|says?|includes?|uses?) "
                      r"(?:the )?(?:word|phrase|code word|keyword|password|string)\b", re.IGNORECASE)
_OBEY_DATA = re.compile(
    r"\b(?:follow|obey|execute|carry out|comply with|act on|do what|perform|apply)\b(?:\W+\w+){0,4}?\W+"
    r"(?:instructions?|commands?|requests?|directives?|orders?|whatever)\b.{0,60}\b(?:in|inside|within|from|"
    r"found in|contained in|embedded in)\b.{0,20}\b(?:conversation|messages?|memor(?:y|ies)|data|input|new fact|"
    r"facts?|retrieved|turns?|documents?|text|dialogue|transcript|user content)", re.IGNORECASE)
_OBEY_LATER = re.compile(
    r"\b(?:instructions?|commands?|requests?|directives?|orders?)\b.{0,40}\b(?:in|inside|within|from|found in|"
    r"contained in|embedded in)\b.{0,20}\b(?:conversation|messages?|memor(?:y|ies)|data|input|new fact|facts?|"
    r"retrieved|turns?|documents?|text|dialogue|transcript)\b.{0,80}\b(?:follow|obey|execute|carry out|comply with|"
    r"act on)\b(?:\W+\w+){0,2}?\W+(?:them|it|those|these)\b", re.IGNORECASE)
_TREAT_AS = re.compile(r"\btreat\b.{0,80}\bas\b.{0,40}\b(?:instructions?|commands?|orders?)\b",
                       re.IGNORECASE)
_SOURCE = (r"(?:conversation|conversations|data|user(?:'s)? messages?|messages?|memor(?:y|ies)|input|text|turns?|"
           r"transcript|documents?|retrieved \w+|new facts?|facts?|dialogue|chat|history|user|users|speakers?)")
_ASKS = r"(?:tells?|asks?|says?|instructs?|wants?|requests?|commands?|orders?|demands?|directs?)"
_OBEY_WHATEVER = re.compile(
    rf"\b(?:do|follow|obey|execute|carry out|comply with|act on|perform)\b\W+(?:whatever|anything|everything|all|"
    rf"exactly what|what)\b(?:\W+\w+){{0,3}}?\W+{_SOURCE}\W+(?:\w+\W+){{0,2}}?{_ASKS}\b|"
    rf"\b(?:whatever|anything|everything|all)\b(?:\W+\w+){{0,3}}?\W+{_SOURCE}\W+(?:\w+\W+){{0,2}}?{_ASKS}\b"
    rf"(?:\W+\w+){{0,5}}?\W+(?:do (?:it|that|so|them)|follow (?:it|that|them)|obey(?: it| that| them)?|comply|"
    rf"carry (?:it|that|them) out)\b", re.IGNORECASE)
_AGAINST_RULES = re.compile(r"\beven (?:if|when|though|where) (?:it|they|that|this|doing so)\b(?:\W+\w+){0,2}?\W+"
                            r"(?:conflicts?|contradicts?|clash(?:es)?|goes against|go against|overrides?|breaks?|"
                            r"violates?)\b", re.IGNORECASE)
_OTHERS_MEMORIES = re.compile(
    r"\b(?:memor(?:y|ies)|facts?|data|histor(?:y|ies)|conversations?|records?|profiles?|stores?)\b\W+(?:of|from|"
    r"belonging to|across)\W+(?:\w+\W+){0,2}?(?:every|all|other|any|another)\W+(?:\w+\W+)?"
    r"(?:users?|people|persons?|customers?|accounts?|tenants?|members?)\b|"
    r"\b(?:everyone|everybody|other people|other users|all users|every user|another user|other customers)['’]s?\W+"
    r"(?:\w+\W+)?(?:memor(?:y|ies)|facts?|data|histor(?:y|ies)|conversations?|records?|profiles?)\b", re.IGNORECASE)
_USE_VERB = re.compile(r"\b(?:use|using|uses|draw on|drawing on|consult|consulting|search|searching|query|querying|"
                       r"read|reading|look up|combine|combining|pull|pulling|access|accessing|answer|answering|"
                       r"rely on|relying on|merge|merging|include|including|mix in|blend|retrieve|retrieving)\b",
                       re.IGNORECASE)
_KEPT_APART = re.compile(r"\b(?:apart|separate|separately|isolat\w+|private|partitioned|scoped)\b|^\W*(?:are|is|must|"
                         r"should|may|can)(?:n't| not| never)\b|^\W*(?:never|not available|off[- ]limits|forbidden|"
                         r"out of bounds|excluded)\b", re.IGNORECASE)
_WIPE = re.compile(r"\b(?:delete|remove|erase|wipe|purge|drop|clear)\s+(?:all|every|each|the entire|everything)\b"
                   r"(?:\W+\w+){0,3}?\W*(?:memor|entr|record|fact|data|store|user)|"
                   r"\b(?:DELETE|delete)\b for (?:every|all|each) (?:memory|memories|entry|entries)", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|only|that|which|who|retract\w*|contradict\w*|outdated|"
                        r"no longer true|wrong|incorrect|duplicates?)\b", re.IGNORECASE)
_POISON = re.compile(r"\b(?:always|for every|for all|to every|in every|regardless)\b.{0,60}\b(?:add|insert|store|"
                     r"record|save|write|create)\b.{0,40}\b(?:memory|memories|fact|entry)\b|\b(?:invent|fabricate|"
                     r"make up)\b.{0,30}\b(?:facts?|memor(?:y|ies)|entries)\b|\b(?:add|insert|store)\b.{0,60}\b(?:even "
                     r"(?:if|though) (?:nobody|no one|it was not|they did not|the user did not)|that no one said)",
                     re.IGNORECASE)
_FOREIGN = re.compile(
    r"\b(?:ignorez|ignore[sz]?|oubliez|oublie|négligez)\b.{0,40}\b(?:instructions|consignes|règles)\b|"
    r"\b(?:ignora|ignore|olvida|olvide|omite|omita|descarta)\b.{0,40}\b(?:instrucciones|reglas|indicaciones)\b|"
    r"\b(?:ignoriere|ignorieren|ignorier|vergiss|vergessen|missachte|übergehe)\b.{0,40}\b(?:anweisungen|regeln|"
    r"instruktionen|vorgaben|befehle)\b|"
    r"\b(?:ignore|esqueça|esqueca|desconsidere|desconsiderar|ignorar)\b.{0,40}\b(?:instruções|instrucoes|regras|"
    r"orientações)\b|"
    r"\b(?:ignora|dimentica|trascura|ignorate|dimenticate)\b.{0,40}\b(?:istruzioni|regole|indicazioni)\b|"
    r"(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|отбрось)\w*.{0,40}(?:инструкци|правил|указани)|"
    r"(?:忽略|无视|忽视|忘记|忘掉|不要理会).{0,12}(?:指令|指示|说明|规则|提示|要求)|"
    r"(?:指示|命令|ルール|プロンプト|説明).{0,15}(?:無視|忘れ)|(?:無視|忘れ).{0,10}(?:指示|命令|ルール)|"
    r"\b(?:negeer|vergeet)\b.{0,40}\b(?:instructies|regels|aanwijzingen)\b|"
    r"\b(?:zignoruj|ignoruj|zapomnij)\b.{0,40}\b(?:instrukcje|polecenia|zasady|reguły)|"
    r"\b(?:yoksay|görmezden gel|unut)\w*.{0,40}\b(?:talimat|kural|yönerge)\w*|"
    r"\b(?:talimat|kural|yönerge)\w*.{0,40}\b(?:yoksay|görmezden gel|unut)\w*|"
    r"\b(?:abaikan|lupakan)\b.{0,40}\b(?:instruksi|perintah|aturan)\b|"
    r"(?:무시|잊어).{0,20}(?:지시|명령|규칙|지침)|(?:지시|명령|규칙|지침).{0,20}(?:무시|잊어)|"
    r"(?:تجاهل|انس).{0,40}(?:التعليمات|الأوامر|القواعد)|"
    r"(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल).{0,40}(?:निर्देश|नियम)|(?:निर्देश|नियम).{0,40}(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)|"
    r"systeemprompt|prompt systemowy|sistem (?:istemi|komut)|시스템 프롬프트|موجه النظام|تعليمات النظام|सिस्टम प्रॉम्प्ट|"
    r"prompt (?:système|systeme|del sistema|di sistema|do sistema)|system-?prompt|systemanweisung|"
    r"системн\w* (?:промпт|подсказк|инструкц)|系统提示|系統提示|システムプロンプト|"
    r"clave de (?:la )?api|chave (?:de )?api|clé (?:d'|de l')?api|api-schlüssel|ключ api|api ?キー|api ?密钥|"
    r"(?:envie|envía|envoyez|sende|invia|отправ\w+|发送|送信).{0,60}(?:https?://|\.net|\.com|\.io)",
    re.IGNORECASE)
_SPACED = re.compile(r"(?:\b\w\b[ \u00a0]{1,3}){5,}\b\w\b")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){16,}\b")
_B64 = re.compile(r"(?<![\w/+=])[A-Za-z0-9+/]{24,}={0,2}(?![\w/+=])")
# leetspeak: a word mixing letters with digits or symbols that stand for letters ("1gn0r3", "pr3v10us", "$ystem")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i",
                       "|": "l", "8": "b", "9": "g"})
_LEET_WORD = re.compile(r"(?<![\w@$!|])(?=[\w@$!|]*[A-Za-z])(?=[\w@$!|]*[0134579@$!|8])[A-Za-z0-9@$!|]{3,}(?![\w@$|])")
# homoglyphs: Cyrillic and Greek letters that look Latin, read as Latin in a word that mixes them with Latin ones
_HOMOGLYPHS = str.maketrans("аеорсухкмтнвіјѕԁɡАЕОРСУХКМТНВІЈЅαορνικτΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
                            "aeopcyxkmthbijsdgAEOPCYXKMTHBIJSaopvikTABEHIKMNOPTXYZ")
_MIXED_SCRIPT = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f\u0261])\w+\b")
_ROT13 = re.compile(r"\brot-?13\b|\bcaesar\b", re.IGNORECASE)
_DECODE = re.compile(r"\b(?:decode|decoded|decoding|decipher|translate|apply|unscramble|reverse)\b.{0,80}\b(?:obey|"
                     r"follow|execute|do|perform|carry out|act on|run|comply)\b|\b(?:obey|follow|execute|run|carry out)"
                     r"\b.{0,60}\b(?:decoded|encoded|hex|base64|rot-?13|cipher)", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    """Sentences and lines of a prompt (a line break ends a sentence: rules are often one a line)."""
    parts = []
    for line in text.splitlines():
        parts += [p.strip() for p in re.split(r"(?<=[.!?])\s+(?=[A-Z\"“(<=#\[!¡¿\u0400-\u04ff])", line) if p.strip()]
    return parts


def _unquoted(sentence: str) -> str:
    return _QUOTED.sub(" ", sentence)


def _negated(sentence: str, start: int) -> bool:
    """Whether the words just before ``start`` (within the clause) negate what follows."""
    clause = re.split(r"[;:.!?]|\b(?:but|and then|then)\b", sentence[:start])[-1]
    return bool(_NEGATION.search(" ".join(clause.split()[-7:]).lower()))


def _hit(pattern: re.Pattern[str], sentence: str, *, negatable: bool = True) -> bool:
    return any(not (negatable and _negated(sentence, m.start())) for m in pattern.finditer(sentence))


def _decoded(sentence: str) -> list[str]:
    """What the sentence smuggles: hex and base64 runs decoded to text, ROT13 undone, letter-spacing closed."""
    out = []
    for m in _HEX.finditer(sentence):
        try:
            out.append(binascii.unhexlify(m.group()).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            pass
    for m in _B64.finditer(sentence):
        try:
            text = base64.b64decode(m.group() + "=" * (-len(m.group()) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        if sum(c.isalpha() or c.isspace() for c in text) >= 0.85 * len(text) and " " in text:
            out.append(text)
    if _ROT13.search(sentence) or re.search(r"[A-Za-z]{4,}", sentence):  # ROT13 needs no label: try it on any text
        out.append(codecs.decode(sentence, "rot13"))
    if _LEET_WORD.search(sentence):
        out.append(_LEET_WORD.sub(lambda m: m.group().translate(_LEET), sentence))
    if _MIXED_SCRIPT.search(sentence):
        out.append(_MIXED_SCRIPT.sub(lambda m: m.group().translate(_HOMOGLYPHS), sentence))
    for m in _SPACED.finditer(sentence):
        out.append(re.sub(r"(?<=\w) (?=\w)", "", m.group()).replace("  ", " "))
    return out


def _plain_findings(sentence: str) -> list[str]:
    """What a sentence (already freed of hidden characters) holds, by family."""
    found = []
    plain = _unquoted(sentence)
    low = plain.lower()
    if _hit(_OVERRIDE, low) or _hit(_FOREIGN, plain, negatable=False):
        found.append("override")
    if _VOID.search(low) and not _negated(low, _VOID.search(low).start()):
        found.append("override")
    if _hit(_DISCLOSE, plain) or (_SECRET_NAMES.search(plain) and _hit(re.compile(rf"\b{_DISCLOSE_VERB}\b"), low)):
        found.append("disclosure")
    if _IMAGE.search(sentence) or (_URL.search(plain) and _hit(_TRANSPORT, plain)):
        found.append("exfiltration")
    if (_PAYLOAD.search(low) or _ENCODED_OUT.search(low)) and (_URL.search(plain) or _ENCODED_OUT.search(low)
                                                                or _hit(_EXTRA_FIELD, plain)):
        if not _negated(low, (_PAYLOAD.search(low) or _ENCODED_OUT.search(low)).start()):
            found.append("exfiltration")
    if _hit(_TOOLS, plain) or _SQL.search(plain):
        found.append("tool abuse")
    if _hit(_JAILBREAK, plain):
        found.append("jailbreak")
    if _hit(_PRIVILEGE, plain) or (_ALL_USERS.search(plain) and _hit(_DUMP_VERB, plain)
                                   and not _negated(low, _ALL_USERS.search(low).start())):
        found.append("privilege")
    others = _OTHERS_MEMORIES.search(plain)
    if others and _hit(_USE_VERB, plain) and not _negated(low, others.start()) \
            and not _KEPT_APART.search(plain[:others.start()] + " " + plain[others.end():]) \
            and not _KEPT_APART.search(re.split(r"[;.,]", plain[others.end():])[0].strip()) \
            and "privilege" not in found:
        found.append("privilege")
    if _TRIGGER.search(plain) and (found or _hit(_DUMP_VERB, plain) and _ALL_USERS.search(plain)):
        found.append("trigger")
    obey = _OBEY_DATA.search(plain)
    if obey and not _negated(low, obey.start()):
        found.append("standing order")
    later = _OBEY_LATER.search(plain)
    if later and not _NEGATION.search(later.group().lower()):
        found.append("standing order")
    whatever = _OBEY_WHATEVER.search(plain)
    if whatever and not _negated(low, whatever.start()):
        found.append("standing order")
    against = _AGAINST_RULES.search(plain)
    if against and re.search(rf"\b{_SOURCE}\b", plain[: against.start()], re.IGNORECASE) and re.search(
            r"\b(?:rules?|instructions?|guidelines?|prompt|policy|policies)\b", plain[against.end():], re.IGNORECASE) \
            and not _negated(low, 0 if not _NEGATION.search(low[: against.start()]) else against.start()):
        found.append("standing order")
    treat = _TREAT_AS.search(plain)
    if treat and not _NEGATION.search(treat.group().lower()) and not _negated(low, treat.start()):
        found.append("standing order")
    wipe = _WIPE.search(plain)
    if wipe and not _negated(low, wipe.start()) and not _CONDITION.search(plain[wipe.end():]):
        found.append("poisoning")
    if _hit(_POISON, plain):
        found.append("poisoning")
    return found


def _findings(sentence: str) -> list[str]:
    found = []
    visible = _ZERO_WIDTH.sub("", unicodedata.normalize("NFKC", sentence))
    if visible != unicodedata.normalize("NFKC", sentence) and _ZERO_WIDTH.search(sentence):
        found.append("hidden characters")
    found += _plain_findings(visible)
    if _TEMPLATE.search(visible):
        found.append("override (chat template)")
    if _DECODE.search(visible):
        found.append("smuggled instruction")
    for text in _decoded(visible):
        inner = _plain_findings(text)
        if inner:
            found.append(f"smuggled {inner[0]}")
    return list(dict.fromkeys(found))


def injections(text: str) -> list[tuple[str, str]]:
    """Each sentence of ``text`` that holds an injection, with what kind (see the module docstring)."""
    out = []
    for sentence in _sentences(text):
        found = _findings(sentence)
        if found:
            out.append((sentence, ", ".join(found)))
    return out
