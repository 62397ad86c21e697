package io.meshpilot.networking.envoyfilter;

import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** istiod's insertBeforeFunc, insertAfterFunc and replaceFunc: at the first element that matches. */
final class ListOps {
    private ListOps() {
    }

    static <E> boolean insertBefore(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.add(i, value);
                return true;
            }
        }
        return false;
    }

    static <E> boolean insertAfter(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.add(i + 1, value);
                return true;
            }
        }
        return false;
    }

    static <E> boolean replace(List<E> list, Predicate<E> at, E value) {
        for (int i = 0; i < list.size(); i++) {
            if (at.test(list.get(i))) {
                list.set(i, value);
                return true;
            }
        }
        return false;
    }

    /**
     * istiod's list operations on a filter list: ADD and INSERT_FIRST; INSERT_AFTER and
     * INSERT_BEFORE at the first element {@code at} matches, or at the end or the start when
     * the patch names no element; REPLACE and REMOVE only when it names one. Returns false for
     * an operation that is not a list operation (MERGE), which the caller handles.
     *
     * @param named whether the patch's match names an element of the list
     */
    static <E> boolean apply(List<E> list, Operation op, E value, boolean named, Predicate<E> at) {
        switch (op) {
            case ADD -> list.add(value);
            case INSERT_FIRST -> list.addFirst(value);
            case INSERT_AFTER -> {
                if (!named) {
                    list.add(value);
                } else {
                    insertAfter(list, at, value);
                }
            }
            case INSERT_BEFORE -> {
                if (!named) {
                    list.addFirst(value);
                } else {
                    insertBefore(list, at, value);
                }
            }
            case REPLACE -> {
                if (named) {
                    replace(list, at, value);
                }
            }
            case REMOVE -> {
                if (named) {
                    list.removeIf(at);
                }
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    static <E> List<E> mutable(List<E> list) {
        return new ArrayList<>(list);
    }
}
