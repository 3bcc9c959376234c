"""Seeds an initialised Tryton database for erp-tools' Tryton example and tests.

Two companies (SBY-01, JKT-01), suppliers with supplier prices per company, a buyer per
company, a user without purchase rights, and one REST key per user. Writes the keys file
(JSON subject -> key) and a facts file (JSON: company, party, product ids) that the tests
read so they never hard-code ids.

Usage: TRYTOND_CONFIG=<conf> python seed.py <database> <keys.json> <facts.json>
"""

import json
import sys
from decimal import Decimal

from proteus import Model, config as pconfig
from trytond.modules.company.tests.tools import create_company
from trytond.modules.currency.tests.tools import get_currency

database, keys_path, facts_path = sys.argv[1:4]
cfg = pconfig.set_trytond(database)

Party = Model.get('party.party')
Company = Model.get('company.company')
User = Model.get('res.user')
Group = Model.get('res.group')
ModelData = Model.get('ir.model.data')
Uom = Model.get('product.uom')
Template = Model.get('product.template')
ProductSupplier = Model.get('purchase.product_supplier')
Application = Model.get('res.user.application')

currency = get_currency('IDR')


def group(module, fs_id):
    return Group(ModelData.get_id(module, fs_id, cfg.context))


def use_company(company):
    """Switches the admin's current company (the company rules read it)."""
    admin = User(cfg.user)
    admin.company = company
    admin.save()
    cfg._context = User.get_preferences(True, {})


# The first company through the configuration wizard (it also adds it to the admin).
sby_party = Party(name='PT Niaga Surabaya', code='SBY-01')
sby_party.save()
create_company(party=sby_party, currency=currency)
sby, = Company.find([('party', '=', sby_party.id)])
jkt_party = Party(name='PT Niaga Jakarta', code='JKT-01')
jkt_party.save()
jkt = Company(party=jkt_party, currency=currency)
jkt.save()
admin = User(cfg.user)
admin.companies.append(Company(jkt.id))
admin.save()
cfg._context = User.get_preferences(True, {})

unit, = Uom.find([('name', '=', 'Unit')])
kilogram, = Uom.find([('name', '=', 'Kilogram')])


def product(name, uom, list_price):
    template = Template(
        name=name, default_uom=uom, purchase_uom=uom, type='goods',
        purchasable=True, list_price=Decimal(list_price))
    template.save()
    return template


templates = {
    'RICE-25': product('Beras 25kg', unit, '380000'),
    'OIL-2L': product('Minyak Goreng 2L', unit, '36000'),
    'SUGAR': product('Gula Pasir', kilogram, '17000'),
}
suppliers = {}
for name in ['PT Sumber Beras', 'CV Minyak Jaya', 'PT Gula Jakarta']:
    party = Party(name=name)
    party.save()
    suppliers[name] = party

# Supplier prices are company-bound records: create each with its company current.
# (supplier, product, [(minimal quantity, unit price)]) per company.
catalogue = {
    'SBY-01': (sby, [
        ('PT Sumber Beras', 'RICE-25', [(0, '342500.00'), (50, '335000.00')]),
        ('CV Minyak Jaya', 'OIL-2L', [(0, '31250.50')]),
        ('CV Minyak Jaya', 'RICE-25', [(0, '351000.00')]),
    ]),
    'JKT-01': (jkt, [
        ('PT Gula Jakarta', 'SUGAR', [(0, '14250.00'), (100, '13900.00')]),
        ('PT Sumber Beras', 'RICE-25', [(0, '349000.00')]),
    ]),
}
for branch, (company, rows) in catalogue.items():
    use_company(company)
    for supplier, code, prices in rows:
        ps = ProductSupplier(
            template=Template(templates[code].id), party=suppliers[supplier],
            company=Company(company.id))
        for quantity, price in prices:
            ps.prices.new(quantity=quantity, unit_price=Decimal(price))
        ps.save()
use_company(sby)

purchase = group('purchase', 'group_purchase')
people = [
    # subject, login, companies, groups
    ('buyer-sby', 'buyer_sby', [sby], [purchase]),
    ('buyer-jkt', 'buyer_jkt', [jkt], [purchase]),
    ('clerk-sby', 'clerk_sby', [sby], []),
]
keys = {}
users = {}
for subject, login, companies, groups in people:
    user = User(name=subject, login=login)
    for company in companies:
        user.companies.append(Company(company.id))
    user.company = Company(companies[0].id)
    for g in groups:
        user.groups.append(Group(g.id))
    user.save()
    application = Application(user=user, application='rest')
    application.save()
    keys[subject] = application.key
    users[subject] = user.id

with open(keys_path, 'w') as f:
    json.dump(keys, f, indent=2)
facts = {
    'companies': {'SBY-01': sby.id, 'JKT-01': jkt.id},
    'currency': currency.id,
    'suppliers': {name: p.id for name, p in suppliers.items()},
    'templates': {code: t.id for code, t in templates.items()},
    'products': {code: t.products[0].id for code, t in templates.items()},
    'units': {'Unit': unit.id, 'Kilogram': kilogram.id},
    'users': users,
}
with open(facts_path, 'w') as f:
    json.dump(facts, f, indent=2)
print('seeded', json.dumps(facts))
