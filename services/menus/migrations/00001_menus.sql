-- +goose Up
-- The restaurant catalog and the menus that select from it. Every child row
-- carries its restaurant and points at its parent through (restaurant_id, id),
-- so no row can reach another restaurant's catalog.

CREATE TABLE categories (
    id                      uuid        PRIMARY KEY,
    restaurant_id           uuid        NOT NULL,
    name                    text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    visible                 boolean     NOT NULL DEFAULT true,
    regulated_product_class text        NOT NULL DEFAULT 'standard' CHECK (char_length(regulated_product_class) BETWEEN 1 AND 64),
    discount_policy         text        NOT NULL DEFAULT 'allowed' CHECK (char_length(discount_policy) BETWEEN 1 AND 64),
    created_at              timestamptz NOT NULL DEFAULT now(),
    UNIQUE (restaurant_id, id)
);

-- A catalog item: one per restaurant, the same across menus (a menu selects
-- it and may give it its own price). version moves on every change of the row.
CREATE TABLE items (
    id                               uuid        PRIMARY KEY,
    restaurant_id                    uuid        NOT NULL,
    category_id                      uuid        NOT NULL,
    name                             text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description                      text        CHECK (char_length(description) <= 2000),
    base_price_minor                 bigint      NOT NULL CHECK (base_price_minor BETWEEN 0 AND 1000000000),
    visible                          boolean     NOT NULL DEFAULT true,
    show_in_kitchen                  boolean     NOT NULL DEFAULT true,
    product_type                     text        NOT NULL DEFAULT 'food' CHECK (char_length(product_type) BETWEEN 1 AND 64),
    vegan                            boolean     NOT NULL DEFAULT false,
    vegetarian                       boolean     NOT NULL DEFAULT false,
    gluten_free                      boolean     NOT NULL DEFAULT false,
    dairy_free                       boolean     NOT NULL DEFAULT false,
    lactose_free                     boolean     NOT NULL DEFAULT false,
    low_lactose                      boolean     NOT NULL DEFAULT false,
    egg_free                         boolean     NOT NULL DEFAULT false,
    nut_free                         boolean     NOT NULL DEFAULT false,
    soy_free                         boolean     NOT NULL DEFAULT false,
    tag                              text        CHECK (char_length(tag) <= 64),
    track_volume                     boolean     NOT NULL DEFAULT false,
    open_price                       boolean     NOT NULL DEFAULT false,
    is_alcohol                       boolean     NOT NULL DEFAULT false,
    volume                           numeric     CHECK (volume >= 0),
    unit                             text        CHECK (char_length(unit) <= 32),
    alcohol_type                     text        CHECK (char_length(alcohol_type) <= 64),
    alcohol_percentage               numeric     CHECK (alcohol_percentage BETWEEN 0 AND 100),
    regulated_product_class_override text        CHECK (char_length(regulated_product_class_override) <= 64),
    discount_policy_override         text        CHECK (char_length(discount_policy_override) <= 64),
    availability                     text        NOT NULL DEFAULT 'available' CHECK (availability IN ('available', 'sold_out', 'hidden')),
    version                          bigint      NOT NULL DEFAULT 1,
    created_at                       timestamptz NOT NULL DEFAULT now(),
    updated_at                       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (restaurant_id, id),
    UNIQUE (restaurant_id, id, category_id),
    FOREIGN KEY (restaurant_id, category_id) REFERENCES categories (restaurant_id, id)
);
CREATE INDEX items_restaurant ON items (restaurant_id, id);

CREATE TABLE option_groups (
    id             uuid    PRIMARY KEY,
    restaurant_id  uuid    NOT NULL,
    name           text    NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    min_selections integer NOT NULL DEFAULT 0 CHECK (min_selections >= 0),
    max_selections integer NOT NULL DEFAULT 1 CHECK (max_selections >= min_selections AND max_selections >= 1),
    UNIQUE (restaurant_id, id)
);

CREATE TABLE options (
    id              uuid    PRIMARY KEY,
    restaurant_id   uuid    NOT NULL,
    option_group_id uuid    NOT NULL,
    name            text    NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    price_minor     bigint  NOT NULL DEFAULT 0 CHECK (price_minor BETWEEN 0 AND 1000000000),
    visible         boolean NOT NULL DEFAULT true,
    position        integer NOT NULL DEFAULT 0,
    FOREIGN KEY (restaurant_id, option_group_id) REFERENCES option_groups (restaurant_id, id)
);
CREATE INDEX options_group ON options (option_group_id, position);

-- Which option groups an item offers, in order.
CREATE TABLE item_option_groups (
    restaurant_id   uuid    NOT NULL,
    item_id         uuid    NOT NULL,
    option_group_id uuid    NOT NULL,
    position        integer NOT NULL DEFAULT 0 CHECK (position >= 0),
    PRIMARY KEY (item_id, option_group_id),
    FOREIGN KEY (restaurant_id, item_id) REFERENCES items (restaurant_id, id),
    FOREIGN KEY (restaurant_id, option_group_id) REFERENCES option_groups (restaurant_id, id)
);
CREATE INDEX item_option_groups_group ON item_option_groups (option_group_id);

CREATE TABLE product_categories (
    id            uuid PRIMARY KEY,
    restaurant_id uuid NOT NULL,
    name          text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    UNIQUE (restaurant_id, id)
);

-- Stock products (what the kitchen counts), grouped by product category.
CREATE TABLE products (
    id                  uuid    PRIMARY KEY,
    restaurant_id       uuid    NOT NULL,
    product_category_id uuid    NOT NULL,
    name                text    NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    unit                text    NOT NULL CHECK (char_length(unit) BETWEEN 1 AND 32),
    track_stock         boolean NOT NULL DEFAULT false,
    FOREIGN KEY (restaurant_id, product_category_id) REFERENCES product_categories (restaurant_id, id)
);
CREATE INDEX products_category ON products (product_category_id);

CREATE TABLE combos (
    id            uuid    PRIMARY KEY,
    restaurant_id uuid    NOT NULL,
    name          text    NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    price_minor   bigint  NOT NULL CHECK (price_minor BETWEEN 0 AND 1000000000),
    visible       boolean NOT NULL DEFAULT true,
    UNIQUE (restaurant_id, id)
);

CREATE TABLE combo_components (
    combo_id      uuid    NOT NULL,
    position      integer NOT NULL CHECK (position >= 0),
    restaurant_id uuid    NOT NULL,
    item_id       uuid    NOT NULL,
    quantity      integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    PRIMARY KEY (combo_id, position),
    FOREIGN KEY (restaurant_id, combo_id) REFERENCES combos (restaurant_id, id),
    FOREIGN KEY (restaurant_id, item_id) REFERENCES items (restaurant_id, id)
);
CREATE INDEX combo_components_item ON combo_components (item_id);

-- A menu selects catalog items. revision moves on every change of the menu,
-- its categories, its entries, their items or its publication.
CREATE TABLE menus (
    id            uuid        PRIMARY KEY,
    restaurant_id uuid        NOT NULL,
    name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    revision      bigint      NOT NULL DEFAULT 1,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (restaurant_id, id)
);
CREATE INDEX menus_by_name ON menus (restaurant_id, name, id);

CREATE TABLE menu_categories (
    restaurant_id uuid    NOT NULL,
    menu_id       uuid    NOT NULL,
    category_id   uuid    NOT NULL,
    position      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (menu_id, category_id),
    FOREIGN KEY (restaurant_id, menu_id) REFERENCES menus (restaurant_id, id),
    FOREIGN KEY (restaurant_id, category_id) REFERENCES categories (restaurant_id, id)
);

-- An item on a menu, in its category (which must be on the menu), with the
-- menu's own price when it has one.
CREATE TABLE menu_items (
    restaurant_id        uuid   NOT NULL,
    menu_id              uuid   NOT NULL,
    item_id              uuid   NOT NULL,
    category_id          uuid   NOT NULL,
    price_override_minor bigint CHECK (price_override_minor BETWEEN 0 AND 1000000000),
    PRIMARY KEY (menu_id, item_id),
    FOREIGN KEY (menu_id, category_id) REFERENCES menu_categories (menu_id, category_id),
    FOREIGN KEY (restaurant_id, item_id, category_id) REFERENCES items (restaurant_id, id, category_id) ON UPDATE CASCADE
);
CREATE INDEX menu_items_item ON menu_items (item_id);

-- The restaurant's published menus: one row per restaurant, so there is at
-- most one POS menu and one online menu, each a menu of the same restaurant.
CREATE TABLE menu_selection (
    restaurant_id  uuid PRIMARY KEY,
    pos_menu_id    uuid,
    online_menu_id uuid,
    FOREIGN KEY (restaurant_id, pos_menu_id) REFERENCES menus (restaurant_id, id),
    FOREIGN KEY (restaurant_id, online_menu_id) REFERENCES menus (restaurant_id, id)
);

-- +goose StatementBegin
-- An item's version moves on every change of the row.
CREATE FUNCTION item_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF ROW(NEW.*) IS DISTINCT FROM ROW(OLD.*) THEN
        NEW.version := OLD.version + 1;
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER items_version BEFORE UPDATE ON items FOR EACH ROW EXECUTE FUNCTION item_version();

-- +goose StatementBegin
-- A renamed menu moves its revision.
CREATE FUNCTION menu_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.name IS DISTINCT FROM OLD.name AND NEW.revision = OLD.revision THEN
        NEW.revision := OLD.revision + 1;
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER menus_renamed BEFORE UPDATE ON menus FOR EACH ROW EXECUTE FUNCTION menu_renamed();

-- +goose StatementBegin
-- Entries or categories added, changed or removed move their menus' revision
-- (once per statement: a catalog batch of 100 items is one move).
CREATE FUNCTION menu_entries_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1 WHERE id IN (SELECT DISTINCT menu_id FROM changed);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER menu_items_inserted AFTER INSERT ON menu_items REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_entries_changed();
CREATE TRIGGER menu_items_deleted AFTER DELETE ON menu_items REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_entries_changed();
CREATE TRIGGER menu_categories_inserted AFTER INSERT ON menu_categories REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_entries_changed();

-- +goose StatementBegin
-- An UPDATE that writes the same values (a repeated ingestion) is no change.
CREATE FUNCTION menu_items_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1 WHERE id IN (
        SELECT DISTINCT c.menu_id FROM changed c JOIN before b ON b.menu_id = c.menu_id AND b.item_id = c.item_id
         WHERE ROW(b.*) IS DISTINCT FROM ROW(c.*));
    RETURN NULL;
END $$;
CREATE FUNCTION menu_categories_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1 WHERE id IN (
        SELECT DISTINCT c.menu_id FROM changed c JOIN before b ON b.menu_id = c.menu_id AND b.category_id = c.category_id
         WHERE ROW(b.*) IS DISTINCT FROM ROW(c.*));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER menu_items_updated AFTER UPDATE ON menu_items REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_items_updated();
CREATE TRIGGER menu_categories_updated AFTER UPDATE ON menu_categories REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_categories_updated();
CREATE TRIGGER menu_categories_deleted AFTER DELETE ON menu_categories REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION menu_entries_changed();

-- +goose StatementBegin
-- A changed item or category moves the revision of every menu showing it.
CREATE FUNCTION catalog_item_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1
     WHERE id IN (SELECT DISTINCT mi.menu_id FROM menu_items mi JOIN changed c ON c.id = mi.item_id
                   JOIN before b ON b.id = c.id WHERE b.version <> c.version);
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER items_changed AFTER UPDATE ON items REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_item_changed();

-- +goose StatementBegin
CREATE FUNCTION catalog_category_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1
     WHERE id IN (SELECT DISTINCT mc.menu_id FROM menu_categories mc JOIN changed c ON c.id = mc.category_id
                   JOIN before b ON b.id = c.id WHERE ROW(b.*) IS DISTINCT FROM ROW(c.*));
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER categories_changed AFTER UPDATE ON categories REFERENCING OLD TABLE AS before NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_category_changed();

-- +goose StatementBegin
-- Publishing or unpublishing a menu moves its revision: it is no longer (or
-- again) an inactive draft.
CREATE FUNCTION menu_selection_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE menus SET revision = revision + 1
     WHERE id IN (NEW.pos_menu_id, NEW.online_menu_id, OLD.pos_menu_id, OLD.online_menu_id)
       AND id IS DISTINCT FROM NULL;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER menu_selection_updated AFTER UPDATE ON menu_selection FOR EACH ROW
    WHEN (OLD.pos_menu_id IS DISTINCT FROM NEW.pos_menu_id OR OLD.online_menu_id IS DISTINCT FROM NEW.online_menu_id)
    EXECUTE FUNCTION menu_selection_changed();

-- +goose Down
DROP TABLE menu_selection, menu_items, menu_categories, menus, combo_components, combos, products,
    product_categories, item_option_groups, options, option_groups, items, categories;
DROP FUNCTION menu_selection_changed, catalog_category_changed, catalog_item_changed,
    menu_categories_updated, menu_items_updated, menu_entries_changed, menu_renamed, item_version;
