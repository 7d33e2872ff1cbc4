"""A sorted singly linked list with a length, shared by all sections."""


class Node:
    def __init__(self, key: int, next_node: "Node | None") -> None:
        self.key = key
        self.next = next_node


class SortedList:
    def __init__(self) -> None:
        self.head = None
        self.length = 0

    def insert(self, key: int) -> bool:
        previous, node = None, self.head
        while node is not None and node.key < key:
            previous, node = node, node.next
        if node is not None and node.key == key:
            return False
        fresh = Node(key, node)
        if previous is None:
            self.head = fresh
        else:
            previous.next = fresh
        self.length += 1
        return True

    def delete(self, key: int) -> bool:
        previous, node = None, self.head
        while node is not None and node.key < key:
            previous, node = node, node.next
        if node is None or node.key != key:
            return False
        if previous is None:
            self.head = node.next
        else:
            previous.next = node.next
        self.length -= 1
        return True

    def keys(self) -> list:
        result = []
        node = self.head
        while node is not None:
            result.append(node.key)
            node = node.next
        return result


SHARED = SortedList()


def reset() -> None:
    global SHARED
    SHARED = SortedList()


def insert(key: int) -> bool:
    return SHARED.insert(key)


def delete(key: int) -> bool:
    return SHARED.delete(key)
