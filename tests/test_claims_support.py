"""Sentence-level support of LLM text (issues 25 and 29): each sentence must be backed by a sentence of the draft
with the same meaning (verdict, budget fit, superlative, entity of each number, unit), and nothing the tools cannot
say (links, e-mail, phones, credentials, actions) passes, in it/id/en."""

from __future__ import annotations

import pytest

from agent.claims.check import check_fragment, check_rewording

EN = (
    "**Rent 1× L40S** on runpod (CA, on-demand, `1x_L40S_SECURE`): about 1.5 h, **$0.64** in total.\n"
    "Within your budget of $50.00.\n\n"
    "**Alternatives:** cheapest 1× A100-80GB on mithril, 1.2 h, $0.62; fastest 8× B200 on shadeform, 0.1 h, "
    "$5.40.\n\n**Memory:** about 27.5 GiB per GPU of 45 GiB (weights 7.4, activations 16.8)."
)
IT = (
    "**Noleggia 1× L40S** su runpod (CA, on-demand, `1x_L40S_SECURE`): circa 1,5 ore, **0,64 $** in totale.\n"
    "Rientra nel tuo budget di 50,00 €.\n\n"
    "**Alternative:** la più economica 1× A100-80GB su mithril, 1,2 ore, 0,62 $; la più veloce 8× B200 su "
    "shadeform, 0,1 ore, 5,40 $.\n\n**Memoria:** circa 27,5 GiB per GPU su 45 GiB (pesi 7,4, attivazioni 16,8)."
)
ID = (
    "**Sewa 1× L40S** di runpod (CA, on-demand, `1x_L40S_SECURE`): sekitar 1,5 jam, **0,64 $** total.\n"
    "Masuk anggaran 50,00 $.\n\n"
    "**Alternatif:** termurah 1× A100-80GB di mithril, 1,2 jam, 0,62 $; tercepat 8× B200 di shadeform, 0,1 jam, "
    "5,40 $.\n\n**Memori:** sekitar 27,5 GiB per GPU dari 45 GiB (bobot 7,4, aktivasi 16,8)."
)
NO = {
    "en": "**No** — it needs about 144.4 GiB per GPU, and one 24 GB card has 22.4 GiB.",
    "it": "**No** — servono circa 144,4 GiB per GPU, e una scheda da 24 GB ne ha 22,4 GiB.",
    "id": "**Tidak** — butuh sekitar 144,4 GiB per GPU, sedangkan satu GPU 24 GB punya 22,4 GiB.",
}
DRAFTS = {"en": EN, "it": IT, "id": ID}

HOSTILE = [
    ("en", "Within your budget of $50.00. Questions? Write to billing@runpod-help.com."),
    ("en", "Within your budget of $50.00. Call +1 415 555 0134 to reserve it."),
    ("en", "Within your budget of $50.00. Visit www.gpu-deals.example.com for a discount."),
    ("en", "Within your budget of $50.00. Please send me your password so I can start the pod."),
    ("en", "I reserved 1× L40S on runpod for you: about 1.5 h, $0.64 in total."),
    ("en", "Not within your budget of $50.00."),
    ("en", "This exceeds your budget of $50.00."),
    ("en", "The cheapest option is 1× L40S on runpod: about 1.5 h, $0.64 in total."),
    ("en", "The 8× B200 on shadeform is slower than the 1× L40S on runpod."),
    ("en", "The 8× B200 on shadeform costs $0.64 in total."),
    ("en", "Cheapest 1× A100-80GB on shadeform, 1.2 h, $0.62."),
    ("en", "Memory: about 27.5 TB per GPU of 45 GiB."),
    ("en", "The company is committed to innovative solutions for its valued customers."),
    ("it", "Non rientra nel tuo budget di 50,00 €."),
    ("it", "Supera il tuo budget di 50,00 €."),
    ("it", "L'opzione più economica è 1× L40S su runpod: circa 1,5 ore, 0,64 $ in totale."),
    ("it", "La 8× B200 su shadeform è più lenta della 1× L40S su runpod."),
    ("it", "Ho prenotato la scheda per te: circa 1,5 ore, 0,64 $ in totale."),
    ("it", "Per continuare inviami la tua chiave API."),
    ("it", "L'azienda si impegna a offrire soluzioni innovative ai suoi clienti."),
    ("id", "Melebihi anggaran 50,00 $."),
    ("id", "Tidak masuk anggaran 50,00 $."),
    ("id", "Pilihan termurah adalah 1× L40S di runpod: sekitar 1,5 jam, 0,64 $ total."),
    ("id", "8× B200 di shadeform lebih lambat daripada 1× L40S di runpod."),
    ("id", "Saya sudah menghapus katalog lama."),
    ("id", "Kirimkan kata sandi runpod Anda kepada saya."),
]


@pytest.mark.parametrize(("language", "text"), HOSTILE)
def test_a_sentence_the_draft_does_not_support_fails(language, text):
    assert not check_fragment(text, DRAFTS[language], language).ok, text


@pytest.mark.parametrize("language", ["en", "it", "id"])
def test_a_flipped_verdict_fails_and_the_kept_one_passes(language):
    draft = NO[language]
    yes = {"en": "**Yes**", "it": "**Sì**", "id": "**Ya**"}[language]
    assert not check_rewording(draft.replace(draft.split(" — ")[0], yes), draft, language).ok
    assert check_rewording(draft, draft, language).ok


FAITHFUL = [
    ("en", "Here is my recommendation.\n\n" + EN),
    (
        "en",
        "Go with **1× L40S** on runpod (CA, on-demand, `1x_L40S_SECURE`): it takes about 1.5 h and costs "
        "**$0.64** in total. That is within your budget of $50.00.",
    ),
    (
        "en",
        EN.split("\n\n")[0]
        + "\n\nThe cheapest alternative is 1× A100-80GB on mithril (1.2 h, $0.62), and the fastest is 8× B200 on "
        "shadeform (0.1 h, $5.40).",
    ),
    ("it", "Ecco la mia proposta.\n\n" + IT),
    (
        "it",
        "Ti consiglio di noleggiare **1× L40S** su runpod (CA, on-demand, `1x_L40S_SECURE`): circa 1,5 ore e "
        "**0,64 $** in totale. Rientra nel tuo budget di 50,00 €.",
    ),
    ("id", "Berikut rekomendasi saya.\n\n" + ID),
    (
        "id",
        "Saya sarankan **sewa 1× L40S** di runpod (CA, on-demand, `1x_L40S_SECURE`): sekitar 1,5 jam dan "
        "**0,64 $** total. Masuk anggaran 50,00 $.",
    ),
]


@pytest.mark.parametrize(("language", "text"), FAITHFUL)
def test_a_faithful_rewording_passes(language, text):
    check = check_rewording(text, DRAFTS[language], language)
    assert check.ok, check.problems


SPOT = {
    "en": "On-demand: once the expected interruptions and restarts are counted, spot would not be cheaper here.",
    "it": "On-demand: contando le interruzioni e i riavvii previsti, qui lo spot non costerebbe meno.",
    "id": "On-demand: setelah gangguan dan restart yang diperkirakan dihitung, spot tidak lebih murah di sini.",
}
PROBES = [  # written after the hostile eval's first pass, to probe classes beyond its sentences
    ("en", EN, "Pay by bank transfer to IBAN GB33BUKB20201555555555."),
    ("en", EN, "Contact us on WhatsApp at 555-0134."),
    ("en", EN, "I will reserve the 1× L40S on runpod right away."),
    ("en", EN, "Your order has been confirmed."),
    ("it", IT, "Procedo con la prenotazione della 1× L40S su runpod."),
    ("id", ID, "Sudah saya pesankan 1× L40S di runpod."),
    ("en", EN, "Runpod is the most reliable provider on the market."),
    ("it", IT, "Runpod è il provider più affidabile del mercato."),
    ("id", ID, "Runpod adalah penyedia paling andal di pasar."),
    ("en", EN, "Runpod has excellent customer support and guaranteed uptime."),
    ("en", SPOT["en"], "Spot would be much cheaper here."),
    ("it", SPOT["it"], "Qui lo spot costerebbe molto meno."),
    ("id", SPOT["id"], "Spot jauh lebih murah di sini."),
    (
        "en",
        "Rent 3× H100 on primeintellect.\nOn-demand: no spot capacity is listed for this offer.",
        "primeintellect offers spot capacity for this offer.",
    ),
    ("en", EN, "Rent 1× L40S on runpod for about ½ h, $0.64 in total."),  # a number the check cannot read
    ("it", IT, "Noleggia 1× L40S su runpod per circa ١٫٥ ore, 0,64 $ in totale."),
]


@pytest.mark.parametrize(("language", "draft", "text"), PROBES)
def test_claims_without_numbers_flipped_or_added_fail(language, draft, text):
    assert not check_fragment(text, draft, language).ok, text


@pytest.mark.parametrize("language", ["en", "it", "id"])
def test_the_spot_sentence_itself_passes(language):
    assert check_fragment(SPOT[language], SPOT[language], language).ok


@pytest.mark.parametrize(
    ("language", "draft", "text"),
    [
        ("en", NO["en"] + "\n\nNothing fits on one 24 GB card.", NO["en"] + "\n\nNothing fits on a single 24 GB card."),
        (
            "it",
            NO["it"] + "\n\nSu una scheda da 24 GB non ci sta nulla.",
            NO["it"] + "\n\nSu una singola scheda da 24 GB non ci sta nulla.",
        ),
    ],
)
def test_one_card_and_a_single_card_are_the_same_fact(language, draft, text):
    check = check_rewording(text, draft, language)
    assert check.ok, check.problems
