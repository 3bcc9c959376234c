//! Words that mark a field a tool may not take: the company, a person of the company's
//! own side, a status, a workflow step, a price, a discount, a tax, an exchange rate, an
//! amount.

/// Words naming the company or an organisational unit that stands in for it (refused in
/// every tool; the company comes from the caller's token).
pub(crate) const COMPANY: &[&str] = &[
    "org",
    "orgs",
    "organisation",
    "organisations",
    "organization",
    "organizations",
    "subsidiary",
    "subsidiaries",
    "bu",
    "businessunit",
    "dataarea",
    "dataareaid",
    "megaentity",
    "legalentity",
    "cabang",
    "perusahaan",
    "organisasi",
    "divisi",
    "company",
    "companies",
];

/// Two words that together name the company or an organisational unit.
pub(crate) const COMPANY_PAIRS: &[(&str, &str, &str)] = &[
    ("legal", "entity", "legal entity"),
    ("business", "unit", "business unit"),
    ("data", "area", "data area"),
    ("mega", "entity", "mega entity"),
    ("operating", "unit", "operating unit"),
    ("unit", "bisnis", "unit bisnis"),
    ("unit", "usaha", "unit usaha"),
];

/// Words naming a person of the company's own side (refused in every tool; the person
/// comes from the caller's token, approvers from the policy).
pub(crate) const PERSON: &[&str] = &[
    "author",
    "authors",
    "creator",
    "creators",
    "validator",
    "validators",
    "buyer",
    "buyers",
    "salesman",
    "salesmen",
    "salesrep",
    "salesreps",
    "employee",
    "employees",
    "personnel",
    "staff",
    "orderer",
    "orderers",
    "preparer",
    "initiator",
    "submitter",
    "assignee",
    "pegawai",
    "karyawan",
    "staf",
    "pembuat",
    "penyetuju",
    "pemohon",
    "petugas",
    "pemesan",
    "oleh",
];

/// Two words that together name a person of the company's own side.
pub(crate) const PERSON_PAIRS: &[(&str, &str, &str)] = &[
    ("sales", "rep", "sales rep"),
    ("sales", "representative", "sales representative"),
    ("assigned", "to", "assigned to"),
    ("next", "approver", "next approver"),
];

/// Words that name a counterparty in one ERP and the company in another (NetSuite's
/// `entity` is a purchase order's vendor, iDempiere's client is the tenant, Dolibarr's
/// `soc` is the third party): refused until the team declares which it is.
pub(crate) const AMBIGUOUS_PARTY: &[&str] = &[
    "entity", "entities", "client", "clients", "soc", "societe", "entitas", "klien",
];

/// The counterparties a declared reference (`#[erp(kind = "reference", of = "..")]`) may
/// name when its field's name is ambiguous: master data the caller may choose.
pub const COUNTERPARTIES: &[&str] = &[
    "vendor", "supplier", "customer", "partner", "party", "carrier", "contact", "payee",
];

/// Words that mark a status.
pub(crate) const STATUS: &[&str] = &[
    "status",
    "statuses",
    "statut",
    "docstatus",
    "stage",
    "keadaan",
];

/// Words that mark a workflow, approval, posting or sending step (for fields; enum values
/// are judged by the post-tier verbs).
pub(crate) const WORKFLOW: &[&str] = &[
    "approve",
    "approved",
    "approval",
    "approvals",
    "approving",
    "unapproved",
    "approver",
    "approvers",
    "post",
    "posted",
    "posting",
    "processed",
    "processing",
    "hold",
    "onhold",
    "docaction",
    "submit",
    "submitted",
    "submission",
    "send",
    "sent",
    "sending",
    "emailed",
    "faxed",
    "printed",
    "confirm",
    "confirmed",
    "confirmation",
    "validate",
    "validated",
    "validation",
    "completed",
    "void",
    "voided",
    "closed",
    "closing",
    "cancel",
    "cancelled",
    "canceled",
    "cancellation",
    "locked",
    "release",
    "released",
    "reject",
    "rejected",
    "paid",
    "invoiced",
    "billed",
    "reconciled",
    "booked",
    "workflow",
    "wf",
    "supervisor",
    "disetujui",
    "setuju",
    "persetujuan",
    "menyetujui",
    "diposting",
    "diproses",
    "diajukan",
    "dikonfirmasi",
    "konfirmasi",
    "divalidasi",
    "validasi",
    "ditutup",
    "dibatalkan",
    "batal",
    "dikunci",
    "ditolak",
    "dibayar",
    "lunas",
    "ditagih",
    "valide",
    "cloture",
    "accounting",
    "reconciliation",
    "reconcile",
    "pay",
];

/// Two words that together mark a workflow step.
pub(crate) const WORKFLOW_PAIRS: &[(&str, &str, &str)] = &[
    ("doc", "action", "doc action"),
    ("document", "action", "document action"),
    ("to", "be", "to be"),
    ("auto", "submit", "auto submit"),
];

/// Words that mark a price, a cost or a rate.
pub(crate) const PRICE: &[&str] = &[
    "price",
    "prices",
    "pricing",
    "pricelist",
    "cost",
    "costs",
    "costing",
    "unitcost",
    "subprice",
    "markup",
    "harga",
    "biaya",
    "ongkos",
    "tarif",
    "prix",
    "precio",
    "preis",
    "prezzo",
];

/// Words that mark a discount.
pub(crate) const DISCOUNT: &[&str] = &[
    "discount",
    "discounts",
    "disc",
    "remise",
    "diskon",
    "potongan",
    "rabat",
    "rebate",
    "descuento",
    "rabatt",
    "sconto",
];

/// Words that mark a tax.
pub(crate) const TAX: &[&str] = &[
    "tax",
    "taxes",
    "taxable",
    "vat",
    "withholding",
    "tva",
    "iva",
    "gst",
    "hst",
    "pst",
    "mwst",
    "ppn",
    "pph",
    "pajak",
    "excise",
    "fiscal",
    "zakat",
    "nexus",
];

/// Words that, before a last word `rate` (or Dolibarr's `tx`), make it an exchange rate.
pub(crate) const EXCHANGE: &[&str] = &[
    "exchange",
    "exch",
    "conversion",
    "currency",
    "multicurrency",
    "fx",
    "forex",
];

/// Words that mark an exchange rate by themselves.
pub(crate) const EXCHANGE_WORDS: &[&str] = &["kurs", "exchrate", "exchangerate", "fxrate"];

/// Words that mark an amount the ERP computes.
pub(crate) const AMOUNT: &[&str] = &[
    "total",
    "totals",
    "subtotal",
    "subtotals",
    "amount",
    "amounts",
    "amt",
    "extended",
    "balance",
    "nilai",
    "nominal",
    "montant",
    "importe",
    "credit",
    "debit",
];
